// Which server ids may be sent to a panel (docs/http.md "Server ids"). A `{server}` parameter
// is put into the panel's URL path (`/api/client/servers/{id}`): `encodeURIComponent` leaves dots alone
// and `fetch` collapses dot segments, so `..` would ask `/api/client/` and `.` `/api/client/servers/`.
// Ids of both panels are uuids or 8-character identifiers; anything empty, a dot segment, or holding a
// path separator or `%` (still encoded after the router decoded it once) names no server: 404 before
// any request reaches the panel.

/** Whether `id` (decoded) can name a server at all. */
export const isServerId = (id: string): boolean =>
  id !== "" && id !== "." && id !== ".." && !/[/\\%\u0000-\u001f\u007f]/.test(id)
