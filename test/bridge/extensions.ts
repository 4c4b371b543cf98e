import { writeExtension } from "../support/extensions.js"

// Small extensions with hand-written bundles for the bridge's browser tests: each is an IIFE exactly as
// `host build` emits (React and @host/sdk from the page's globals), so the tests need no build step and
// each one states in plain code what the page should show.

const bundle = (body: string) => `(function () {
  var React = window.React;
  var h = React.createElement;
  var sdk = window.__HOST__.sdk;
${body}
})();
`

/** test/widgets: a throwing widget and its neighbour, a per-row component, a late-container probe. */
export const writeWidgets = (parent: string) =>
  writeExtension(parent, {
    id: "test/widgets",
    version: "1.0.0",
    files: {
      "resources/frontend/dist/extension.js": bundle(`
  function Good(props) { return h("div", { "data-testid": "good" }, "Good widget of " + props.extensionId + " in " + props.context.area); }
  function Boom() { throw new Error("Boom: this widget always fails"); }
  function Row(props) {
    var server = props.context.server;
    return h("span", { "data-testid": "row", "data-server": server ? server.uuid : "" }, " row of " + (server ? server.name : "?"));
  }
  function Late(props) { return h("div", { "data-testid": "late" }, "late container in " + props.context.area); }
  sdk.createExtension({
    id: "test/widgets",
    slots: [
      { slot: "dashboard.widgets", component: Good, order: 2 },
      { slot: "dashboard.widgets", component: Boom, order: 1 },
      { slot: "dashboard.serverrow.name.after", component: Row },
      { slot: "test.late", component: Late }
    ]
  });
`)
    }
  })

/** test/mismatch: its bundle registers another id (computed, so install's static scan cannot see it). */
export const writeMismatch = (parent: string) =>
  writeExtension(parent, {
    id: "test/mismatch",
    version: "1.0.0",
    files: {
      "resources/frontend/dist/extension.js": bundle(`
  sdk.createExtension({
    id: ["test", "impostor"].join("/"),
    slots: [{ slot: "dashboard.widgets", component: function () { return h("div", { "data-testid": "impostor" }, "impostor"); } }]
  });
`)
    }
  })

/**
 * test/everywhere: one component in every slot id of `slots` (testid `slot-<id>`, with the server its
 * context names), counting its mounts in `window.__mounts[<slot>|<server>]`, plus a server page and an
 * account page (links in the sub-navigations).
 */
export const writeEverywhere = (parent: string, slots: ReadonlyArray<string>) =>
  writeExtension(parent, {
    id: "test/everywhere",
    version: "1.0.0",
    files: {
      "resources/frontend/dist/extension.js": bundle(`
  var mounts = window.__mounts = window.__mounts || {};
  function Probe(props) {
    var server = props.context.server;
    var key = props.slot + "|" + (server ? server.uuid : "");
    React.useEffect(function () { mounts[key] = (mounts[key] || 0) + 1; }, []);
    return h("span", {
      "data-testid": "slot-" + props.slot,
      "data-server": server ? server.uuid : "",
      className: "everywhere-probe",
      style: { display: "inline-block", fontSize: "11px", padding: "1px 6px", margin: "2px", borderRadius: "4px", background: "var(--host-primary)", color: "#fff" }
    }, props.slot + (server && props.slot.indexOf("serverrow") >= 0 ? " · " + server.name : ""));
  }
  function ServerPage(props) {
    var server = sdk.useServerContext();
    return h("div", { "data-testid": "everywhere-page", style: { padding: "1rem", background: "var(--host-bg-tertiary)", borderRadius: "var(--host-radius-md)" } },
      h("h2", { style: { color: "var(--host-text-primary)", margin: "0 0 .5rem" } }, "Everywhere overview"),
      h("p", null, "An extension page inside the panel, for " + (server ? server.name : "no server") + "."));
  }
  function AccountPage() { return h("div", { "data-testid": "everywhere-account-page" }, "Everywhere account settings"); }
  sdk.createExtension({
    id: "test/everywhere",
    slots: ${JSON.stringify(slots)}.map(function (slot) { return { slot: slot, component: Probe, props: { slot: slot } }; }),
    routes: [
      { area: "server", path: "/", name: "Everywhere", icon: "★", component: ServerPage },
      { area: "account", path: "/", name: "Everywhere", component: AccountPage }
    ]
  });
`)
    }
  })
