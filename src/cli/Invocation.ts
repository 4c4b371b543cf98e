import { Context } from "effect"
import type { Invocation } from "../CompositionRoot.js"

/** The root, verbosity and environment of this run, for handlers that build their own layers. */
export class CliInvocation extends Context.Tag("host/cli/Invocation")<CliInvocation, Invocation>() {}
