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
