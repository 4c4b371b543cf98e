// What `host validate` can tell about an extension's routes without running its code (docs/authoring.md
// "Routes", docs/decisions.md "host validate reads route files as text"): the calls `r.get|post|put|patch|delete(
// "<path>", handler, { permission: "<name>" })` whose path and permission are string literals. A route built
// any other way is not seen here (the runtime still checks what it loads).

export interface ScannedRoute {
  readonly method: string
  readonly path: string
  readonly permission: string
}

const methodCall = /\.(get|post|put|patch|delete)\s*\(/gy

/** Skips a string, template or comment starting at `index`; returns the index after it, or `index` when none starts there. */
const skipInert = (source: string, index: number): number => {
  const char = source[index]
  if (char === "/" && source[index + 1] === "/") {
    const end = source.indexOf("\n", index)
    return end < 0 ? source.length : end + 1
  }
  if (char === "/" && source[index + 1] === "*") {
    const end = source.indexOf("*/", index + 2)
    return end < 0 ? source.length : end + 2
  }
  if (char === "\"" || char === "'" || char === "`") {
    let at = index + 1
    while (at < source.length && source[at] !== char) at += source[at] === "\\" ? 2 : 1
    return at + 1
  }
  return index
}

/** The top-level arguments of the call whose `(` is just before `start`, as source text. */
const callArguments = (source: string, start: number): ReadonlyArray<string> => {
  const args: Array<string> = []
  let depth = 0
  let from = start
  let at = start
  while (at < source.length) {
    const skipped = skipInert(source, at)
    if (skipped !== at) {
      at = skipped
      continue
    }
    const char = source[at]!
    if (char === "(" || char === "[" || char === "{") depth++
    else if (char === ")" || char === "]" || char === "}") {
      if (depth === 0) {
        args.push(source.slice(from, at))
        return args
      }
      depth--
    } else if (char === "," && depth === 0) {
      args.push(source.slice(from, at))
      from = at + 1
    }
    at++
  }
  return args
}

const literal = /^\s*(["'`])([^"'`\\$]*)\1\s*$/
const permissionOption = /\bpermission\s*:\s*(["'`])([^"'`\\$]+)\1/

/** The routes of a route file's source that declare a permission, with literal path and permission. */
export const scanPermissionRoutes = (source: string): ReadonlyArray<ScannedRoute> => {
  const found: Array<ScannedRoute> = []
  let at = 0
  while (at < source.length) {
    const skipped = skipInert(source, at)
    if (skipped !== at) {
      at = skipped
      continue
    }
    methodCall.lastIndex = at
    const call = methodCall.exec(source)
    if (call === null) {
      at++
      continue
    }
    const args = callArguments(source, methodCall.lastIndex)
    const path = literal.exec(args[0] ?? "")
    const permission = args.length >= 3 ? permissionOption.exec(args[args.length - 1]!) : null
    if (path !== null && permission !== null) found.push({ method: call[1]!.toUpperCase(), path: path[2]!, permission: permission[2]! })
    at = methodCall.lastIndex
  }
  return found
}

/** Whether a route path names the `{server}` (or `:server`) parameter, which scopes a permission to one server. */
export const pathHasServer = (path: string): boolean => path.split("/").some((segment) => segment === "{server}" || segment === ":server")
