import { readFileSync } from "node:fs"
import { join } from "node:path"
import { SchemaAST } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { adminRoutesFile, renderAdminRoutes } from "../../scripts/admin-routes.js"
import type { Data, Request } from "../../src/admin-app/api.js"
import { adminRoutes } from "../../src/admin-app/routes.generated.js"
import { HostApi } from "../../src/http/contracts/Api.js"
import { repoRoot } from "../support/cli.js"

// The admin screens' client (src/admin-app/api.ts) calls endpoints by name: their types come from the
// contract, their method and path from src/admin-app/routes.generated.ts, which the build writes from
// HostApi. These checks fail when the committed table and the contract part ways, and when an answer's
// JSON is not what the client's types say it is.

const adminGroup = HostApi.groups.admin
if (adminGroup === undefined) throw new Error("HostApi has no admin group")
const adminEndpoints = Object.values(adminGroup.endpoints)

describe("the admin client's route table", () => {
  it("is the file the generator writes from HostApi today", () => {
    expect(readFileSync(join(repoRoot, adminRoutesFile), "utf8")).toBe(renderAdminRoutes(HostApi))
  })

  it("lists every admin endpoint of the contract, with its method and path, and nothing else", () => {
    const fromContract = Object.fromEntries(adminEndpoints.map((endpoint) => [endpoint.name, `${endpoint.method} ${endpoint.path}`]))
    const fromTable = Object.fromEntries(Object.entries(adminRoutes).map(([name, route]) => [name, `${route.method} ${route.path}`]))
    expect(fromTable).toEqual(fromContract)
    expect(Object.keys(fromTable).length).toBeGreaterThan(20)
    // A stopped reconcile answers its plan with 422: the client reads that body as an answer, not an error.
    expect(adminRoutes.reconcile.successes).toEqual([200, 422])
    expect(adminRoutes.install.successes).toEqual([201])
  })
})

/** Where in `ast` a value's JSON and its decoded type differ (a transformation or declaration), if anywhere. */
const transformationsIn = (ast: SchemaAST.AST, at: string, seen = new Set<SchemaAST.AST>()): ReadonlyArray<string> => {
  if (seen.has(ast)) return []
  seen.add(ast)
  switch (ast._tag) {
    case "Transformation":
      // A struct whose keys keep their names, with defaults for missing ones (`optionalWith(…, {default})`):
      // the server encodes the value it built, so the JSON carries every key with the decoded value.
      if (
        SchemaAST.isTypeLiteralTransformation(ast.transformation) &&
        ast.transformation.propertySignatureTransformations.every((property) => property.from === property.to)
      ) return transformationsIn(ast.from, at, seen)
      return [`${at} (${ast._tag}: ${String(ast)})`]
    case "Declaration":
      return [`${at} (${ast._tag}: ${String(ast)})`]
    case "Refinement":
      return transformationsIn(ast.from, at, seen)
    case "Suspend":
      return transformationsIn(ast.f(), at, seen)
    case "Union":
      return ast.types.flatMap((member, index) => transformationsIn(member, `${at}|${index}`, seen))
    case "TupleType":
      return [
        ...ast.elements.flatMap((element, index) => transformationsIn(element.type, `${at}[${index}]`, seen)),
        ...ast.rest.flatMap((rest) => transformationsIn(rest.type, `${at}[]`, seen))
      ]
    case "TypeLiteral":
      return [
        ...ast.propertySignatures.flatMap((property) => transformationsIn(property.type, `${at}.${String(property.name)}`, seen)),
        ...ast.indexSignatures.flatMap((index) => transformationsIn(index.type, `${at}[key]`, seen))
      ]
    default:
      return []
  }
}

describe("the admin answers the client reads", () => {
  it("are JSON whose decoded type is the JSON itself, so the contract's Success types describe what arrives", () => {
    const found = adminEndpoints.flatMap((endpoint) => transformationsIn(endpoint.successSchema.ast, endpoint.name))
    expect(found).toEqual([])
  })

  it("the walk finds a transformation where one is", async () => {
    const { Schema } = await import("effect")
    expect(transformationsIn(Schema.Struct({ data: Schema.Struct({ at: Schema.DateFromString }) }).ast, "probe")).toEqual([
      expect.stringMatching(/^probe\.data\.at \(Transformation/)
    ])
    // …behind a default too.
    expect(transformationsIn(Schema.Struct({ at: Schema.optionalWith(Schema.Array(Schema.DateFromString), { default: () => [] }) }).ast, "probe")).toEqual([
      expect.stringMatching(/^probe\.at\|0\[\] \(Transformation: DateFromString/)
    ])
    expect(transformationsIn(Schema.Struct({ list: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }) }).ast, "probe")).toEqual([])
  })
})

// Checked by the type check (`npm test` runs it): the client's types are the contract's, so a screen that
// reads an answer as something else does not compile.
describe("the admin client's types", () => {
  it("are the contract's: an update outcome has an error only once it is known to have failed", () => {
    const unnarrowed = (outcome: Data<"updateAll">[number]) =>
      // @ts-expect-error `error` is the failed outcome's alone: a screen looks at `action` first (the /updates drift)
      outcome.error
    void unnarrowed
    const shown = (outcome: Data<"updateAll">[number]) => (outcome.action === "failed" ? `failed: ${outcome.error}` : `${outcome.action} ${outcome.version}`)
    expect(shown({ id: "acme/full", action: "failed", error: "sha256 mismatch" })).toBe("failed: sha256 mismatch")
    expectTypeOf<Request<"detail">["path"]>().toEqualTypeOf<{ readonly vendor: string; readonly name: string }>()
    expectTypeOf<Request<"registryInstall">["body"]>().toEqualTypeOf<{ readonly id: string; readonly version?: string; readonly registry?: string }>()
    expectTypeOf<Data<"registrySearch">[number]["registry"]>().toEqualTypeOf<string>()
  })
})
