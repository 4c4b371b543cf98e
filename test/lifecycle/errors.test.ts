import { Effect, Either, Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { ExtensionNotFound, ManifestInvalid, RootNotFound } from "../../src/domain/Errors.js"
import {
  classify,
  type LifecycleFailure,
  MigrationsFailed,
  OperationFailed,
  OperationRefused,
  SourceRejected
} from "../../src/lifecycle/Errors.js"
import type { Lifecycle } from "../../src/lifecycle/Lifecycle.js"
import { MigrationFailed } from "../../src/lifecycle/Migrations.js"
import { RegistryNotConfigured } from "../../src/registry/RegistryErrors.js"

// The lifecycle's failures keep the typed error a step failed with, keep their wording, and cross a JSON
// boundary through their Schema (docs/decisions.md "Lifecycle: journaled changes, one module per operation, typed failures").

describe("lifecycle failures", () => {
  it("a failed step keeps its typed error as the cause; the sentence is worded as before", () => {
    const cause = new MigrationFailed({ extensionId: "acme/notes", migration: "0001_init", direction: "up", detail: "boom" })
    const failure = classify("add", "acme/notes", "running migrations", cause, "sqlite:host.db")
    expect(failure).toBeInstanceOf(MigrationsFailed)
    expect(failure.cause).toBe(cause)
    expect(failure.reason).toBe("MigrationFailed")
    expect(failure.message).toBe(
      "add acme/notes failed while running migrations: migration 0001_init (up) of acme/notes failed: boom; nothing was changed"
    )
    // Narrowing on the cause's tag reaches its own fields.
    if (failure.cause?._tag === "MigrationFailed") expect(failure.cause.migration).toBe("0001_init")
  })

  it("an error without a message is named by its tag", () => {
    const failure = classify("add", "acme/notes", "verifying and staging acme/notes@^1", new RegistryNotConfigured(), "sqlite:host.db")
    expect(failure._tag).toBe("SourceRejected")
    expect(failure.cause?._tag).toBe("RegistryNotConfigured")
  })

  it("encodes to JSON and decodes back with the same tag, fields and message", () => {
    const failure = new SourceRejected({
      operation: "add",
      extensionId: "acme/notes",
      step: "verifying and staging notes.host",
      reason: "ArchiveRefused",
      detail: "bad archive"
    })
    const json = JSON.parse(JSON.stringify(Schema.encodeSync(OperationFailed)(failure))) as unknown
    const decoded = Schema.decodeUnknownSync(OperationFailed)(json)
    expect(decoded).toBeInstanceOf(SourceRejected)
    expect(decoded.message).toBe(failure.message)

    const refused = new OperationRefused({ operation: "configure", extensionId: "acme/notes", reason: "settings", detail: "x: bad", problems: [{ path: "x", message: "bad" }] })
    const back = Schema.decodeUnknownSync(OperationRefused)(JSON.parse(JSON.stringify(Schema.encodeSync(OperationRefused)(refused))))
    expect(back.message).toBe("configure acme/notes refused: x: bad")
    expect(back.problems).toEqual([{ path: "x", message: "bad" }])
  })

  it("the domain's errors are Schema errors with their messages unchanged", () => {
    const manifest = new ManifestInvalid({ source: "a.host", problems: [{ path: "id", message: "missing" }, { path: "version", message: "bad" }] })
    expect(manifest.message).toBe("a.host: id: missing (and 1 more)")
    expect(Schema.decodeUnknownSync(ManifestInvalid)(Schema.encodeSync(ManifestInvalid)(manifest)).message).toBe(manifest.message)
    expect(Either.isLeft(Schema.decodeUnknownEither(RootNotFound)({ _tag: "RootNotFound", root: "/x", reason: "gone" }))).toBe(true)
    expect(new ExtensionNotFound({ id: "acme/notes" }).message).toBe("extension acme/notes is not installed")
  })

  it("every operation of the service fails with LifecycleFailure and nothing else (checked by tsc)", () => {
    type ErrorOf<K extends "add" | "update" | "enable" | "disable" | "remove" | "configure" | "refreshLink"> = Effect.Effect.Error<
      ReturnType<Lifecycle[K]>
    >
    expectTypeOf<ErrorOf<"add">>().toEqualTypeOf<LifecycleFailure>()
    expectTypeOf<ErrorOf<"update">>().toEqualTypeOf<LifecycleFailure>()
    expectTypeOf<ErrorOf<"enable">>().toEqualTypeOf<LifecycleFailure>()
    expectTypeOf<ErrorOf<"disable">>().toEqualTypeOf<LifecycleFailure>()
    expectTypeOf<ErrorOf<"remove">>().toEqualTypeOf<LifecycleFailure>()
    expectTypeOf<ErrorOf<"configure">>().toEqualTypeOf<LifecycleFailure>()
    expectTypeOf<ErrorOf<"refreshLink">>().toEqualTypeOf<LifecycleFailure>()
  })
})
