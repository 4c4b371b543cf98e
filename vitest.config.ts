import { defaultServerConditions } from "vite"
import { defineConfig } from "vitest/config"

export default defineConfig({
  // src and the tests import @host/sdk as a package; its `host-source` export condition resolves to the
  // TypeScript source (as tsc's customConditions and the esbuild bundles do: docs/decisions.md).
  ssr: { resolve: { conditions: ["host-source", ...defaultServerConditions] } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Prints which database suites were skipped (docs/operations.md).
    globalSetup: ["test/support/databases-setup.ts"]
  }
})
