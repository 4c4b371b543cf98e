import { HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { respond, respondNow } from "../../src/http/api/Respond.js"

// An answer of a typed endpoint is encoded by its declared success schema (DESIGN.md §23): what goes on the
// wire is what the contract says. Before, the value was serialised as it was, the schema only a type.

const Answer = Schema.Struct({ data: Schema.Struct({ name: Schema.String, at: Schema.DateFromString }) })

const bodyOf = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body) : `(${response.body._tag})`

describe("respond", () => {
  it("encodes the answer by the schema: a transformed field in its wire form, a field the schema does not list left out", async () => {
    const value = { data: { name: "acme/hello", at: new Date("2026-11-28T08:00:00.000Z"), internal: "not in the contract" } }
    const response = await Effect.runPromise(respond(Answer, value, { status: 201 }))
    expect(response.status).toBe(201)
    expect(JSON.parse(bodyOf(response))).toEqual({ data: { name: "acme/hello", at: "2026-11-28T08:00:00.000Z" } })
    expect(JSON.parse(bodyOf(respondNow(Answer, value)))).toEqual({ data: { name: "acme/hello", at: "2026-11-28T08:00:00.000Z" } })
  })

  it("a value the schema refuses is a defect (the logged 500), not the caller's 400", async () => {
    const wrong = { data: { name: 42, at: new Date(0) } } as unknown as typeof Answer.Type
    const exit = await Effect.runPromiseExit(respond(Answer, wrong))
    expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    expect(String(Exit.isFailure(exit) ? Cause.squash(exit.cause) : "")).toContain("an answer does not fit its contract")
  })
})
