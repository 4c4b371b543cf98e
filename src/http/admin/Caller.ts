// What the admin API's handlers share about their request. Who the caller is, is not decided here: each
// endpoint states it (http/contracts/Security.ts) and http/api/Callers.ts checks it before the handler runs.

/** The `{vendor}/{name}` of the path, as an extension id. */
export const extensionId = (path: { readonly vendor: string; readonly name: string }) => `${path.vendor}/${path.name}`
