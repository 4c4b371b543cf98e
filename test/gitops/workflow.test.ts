import { spawn } from "node:child_process"
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { startServer, writePanelConfig } from "../http/helpers.js"
import { fixture, hostBin, repoRoot, tempDirsPerTest } from "../support/cli.js"
import { inspectDatabase } from "../support/extensions.js"

// The GitOps workflow of docs/gitops.md, end to end: a bare "origin" repository and clones of it (the
// developer's, the CI runner's workspace, the panel host's), and the shell steps of the page — taken from
// the page itself, so the documentation cannot drift from what works — run with bash against a real panel
// and a real `host serve`.

const temp = tempDirsPerTest()

/** The `gitops-step` shell blocks of docs/gitops.md, by name. */
const documentedSteps = (): Record<string, string> => {
  const page = readFileSync(join(repoRoot, "docs", "gitops.md"), "utf8")
  return Object.fromEntries([...page.matchAll(/<!-- gitops-step: (\w+) -->\n```sh\n([\s\S]*?)```/g)].map((match) => [match[1]!, match[2]!]))
}

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const shell = (cwd: string, script: string, env: Readonly<Record<string, string>>): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn("bash", ["-eu", "-o", "pipefail", "-c", script], { cwd, env: { ...env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })

it("plan on the pull request, apply on merge, drift alarm after a hand toggle, apply by signed webhook", async () => {
  const steps = documentedSteps()
  expect(Object.keys(steps).sort()).toEqual(["apply", "drift", "plan", "webhook"])
  const page = readFileSync(join(repoRoot, "docs", "gitops.md"), "utf8")
  // The GitHub Actions and GitLab CI examples run the same plan command as the generic job.
  const planCommand = steps.plan!.split("\n").find((line) => line.startsWith("host reconcile"))!.replace(/ \|\| status=\$\?$/, "")
  expect(page.split(planCommand).length - 1).toBe(3)
  // Every YAML example is valid YAML; the CI ones have their plan, apply and drift jobs.
  const yamlBlocks = [...page.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => parseYaml(match[1]!) as Record<string, unknown>)
  expect(yamlBlocks).toHaveLength(3)
  expect(Object.keys(yamlBlocks[1]!.jobs as object)).toEqual(["plan", "apply", "drift"])
  expect(Object.keys(yamlBlocks[2]!)).toEqual(expect.arrayContaining(["plan", "apply", "drift"]))

  const base = temp("host-gitops-")
  const origin = join(base, "origin.git")
  const dev = join(base, "dev")
  const ci = join(base, "ci")
  const panel = join(base, "panel")
  // `host` on PATH, as on a runner; git without the machine's own configuration.
  const bin = join(base, "bin")
  mkdirSync(bin)
  writeFileSync(join(bin, "host"), `#!/bin/sh\nexec "${process.execPath}" "${hostBin}" "$@"\n`)
  chmodSync(join(bin, "host"), 0o755)
  const env: Record<string, string> = {
    PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: base,
    NO_COLOR: "1",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Dev",
    GIT_AUTHOR_EMAIL: "dev@example.test",
    GIT_COMMITTER_NAME: "Dev",
    GIT_COMMITTER_EMAIL: "dev@example.test",
    HOST_ROOT: panel
  }
  const sh = (cwd: string, script: string, extra: Record<string, string> = {}) => shell(cwd, script, { ...env, ...extra })
  const ok = async (cwd: string, script: string) => {
    const run = await sh(cwd, script)
    if (run.code !== 0) throw new Error(`${script} failed (${run.code}): ${run.stderr}`)
    return run
  }
  const listed = async () =>
    JSON.parse((await ok(base, "host list --json")).stdout) as Array<{ id: string; version: string; enabled: boolean }>

  // origin with a first commit; the panel (with its own clone for webhook mode) and the CI workspace.
  await ok(base, `git init -q --bare -b main ${origin} && git clone -q ${origin} ${dev} 2>/dev/null`)
  mkdirSync(join(dev, "desired-state"))
  writeFileSync(join(dev, "desired-state", "extensions.yaml"), `host: "1.0"\nextensions: {}\n`)
  await ok(dev, `git checkout -q -b main && git add -A && git commit -qm "Empty desired state" && git push -q -u origin main`)
  mkdirSync(join(panel, "config"), { recursive: true })
  writePanelConfig(panel)
  writeFileSync(join(panel, "config", "host.yaml"), "desired_state: gitops/desired-state/extensions.yaml\n")
  await ok(base, `git clone -q ${origin} ${join(panel, "gitops")} && git clone -q ${origin} ${ci}`)

  // A pull request: an in-house extension committed with the desired state that installs it.
  cpSync(fixture("extensions", "hello-world"), join(dev, "extensions", "hello-world"), { recursive: true })
  writeFileSync(
    join(dev, "desired-state", "extensions.yaml"),
    `host: "1.0"\nextensions:\n  acme/hello-world:\n    source: { path: ../extensions/hello-world }\n`
  )
  await ok(dev, `git checkout -q -b add-hello && git add -A && git commit -qm "Install hello-world" && git push -q -u origin add-hello`)

  // The pull request job: the documented plan step in the runner's checkout of the branch.
  await ok(ci, "git fetch -q origin && git checkout -q -B add-hello origin/add-hello")
  const plan = await sh(ci, steps.plan!)
  expect(plan.code, plan.stderr).toBe(0)
  expect(readFileSync(join(ci, "plan.status"), "utf8").trim()).toBe("2")
  const markdown = readFileSync(join(ci, "plan.md"), "utf8")
  expect(markdown.split("\n")[0]).toBe("## Plan: 1 to install, 0 to update, 0 to enable, 0 to disable, 0 to configure, 0 to repair, 0 to remove.")
  expect(markdown).toContain("| `+` | install | `acme/hello-world` | — → 1.0.0 | not installed |")
  expect(existsSync(join(ci, "plan.json"))).toBe(true)
  expect(await listed()).toEqual([])

  // Merged; the merge job applies the reviewed plan in the same checkout folder.
  await ok(dev, "git checkout -q main && git merge -q --no-ff -m 'Merge add-hello' add-hello && git push -q origin main")
  await ok(ci, "git fetch -q origin && git checkout -q -B main origin/main")
  const apply = await sh(ci, steps.apply!)
  expect(apply.code, apply.stderr).toBe(0)
  expect(apply.stdout).toContain("Apply complete: 1 action(s) applied.")
  expect(await listed()).toMatchObject([{ id: "acme/hello-world", version: "1.0.0", enabled: true }])

  // The scheduled drift check: quiet while the panel matches, exit 2 after a hand toggle.
  const clean = await sh(ci, steps.drift!)
  expect(clean.code, clean.stderr).toBe(0)
  expect(readFileSync(join(ci, "drift.md"), "utf8")).toContain("## No changes. Panel matches desired state.")
  await ok(base, "host disable acme/hello-world")
  const drift = await sh(ci, steps.drift!)
  expect(drift.code, drift.stderr).toBe(2)
  expect(readFileSync(join(ci, "drift.md"), "utf8")).toContain("| `~` | enable | `acme/hello-world` | disabled → enabled | disabled, desired enabled |")

  // Webhook mode: the panel host's clone is updated by the deployment, then CI sends the signed request.
  const secret = "0123456789abcdef0123456789abcdef"
  const server = await startServer(panel, { env: { HOST_WEBHOOK_SECRET: secret } })
  try {
    await ok(base, `git -C ${join(panel, "gitops")} pull -q --ff-only`)
    const webhookEnv = { HOST_URL: server.url, HOST_WEBHOOK_SECRET: secret, DELIVERY_ID: "ci-job-41" }
    const sent = await sh(ci, steps.webhook!, webhookEnv)
    expect(sent.code, sent.stderr).toBe(0)
    const answer = JSON.parse(readFileSync(join(ci, "reconcile.json"), "utf8")) as {
      data: { apply: { applied: Array<{ type: string; id: string }>; failed: unknown } }
    }
    expect(answer.data.apply.applied.map((action) => [action.type, action.id])).toEqual([["enable", "acme/hello-world"]])
    expect(answer.data.apply.failed).toBeNull()
    expect(await listed()).toMatchObject([{ id: "acme/hello-world", enabled: true }])
    expect((await sh(ci, steps.drift!)).code).toBe(0)

    // The same delivery again is refused (curl --fail-with-body: exit 22, the error body kept).
    const repeated = await sh(ci, steps.webhook!, webhookEnv)
    expect(repeated.code).toBe(22)
    expect(JSON.parse(readFileSync(join(ci, "reconcile.json"), "utf8"))).toMatchObject({ errors: [{ code: "DeliveryRepeated", status: "409" }] })
    const wrongSecret = await sh(ci, steps.webhook!, { ...webhookEnv, DELIVERY_ID: "ci-job-42", HOST_WEBHOOK_SECRET: `${secret}x` })
    expect(wrongSecret.code).toBe(22)
    expect(JSON.parse(readFileSync(join(ci, "reconcile.json"), "utf8"))).toMatchObject({ errors: [{ code: "SignatureInvalid", status: "401" }] })
  } finally {
    await server.stop()
  }
  // The activity names what did each change: the plan applied by CI, the hand toggle, the webhook's delivery.
  const contexts = inspectDatabase(panel).activity.map((row) => [row.action, JSON.parse(row.context) as Record<string, unknown>] as const)
  expect(contexts.map(([action, context]) => [action, context.actor, context.delivery])).toEqual([
    ["installed", { type: "reconcile" }, undefined],
    ["disabled", { type: "cli" }, undefined],
    ["enabled", { type: "api", user: "webhook" }, "ci-job-41"]
  ])
})
