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
    // Print which database suites were skipped (docs/operations.md), and at the end which suites were
    // skipped for want of a program with the `apt-get install` that brings them (test/support/programs.ts).
    globalSetup: ["test/support/databases-setup.ts", "test/support/programs-setup.ts"]
  }
})
