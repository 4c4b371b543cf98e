import React from "react"
import ReactDOM from "react-dom"
import * as ReactDOMClient from "react-dom/client"
import * as ReactJSXRuntime from "react/jsx-runtime"

// The panel's one React (docs/frontend.md): loaded before the bridge, the extension bundles and the panel
// app, which all resolve `react`, `react-dom`, `react-dom/client` and `react/jsx-runtime` to these globals
// (src/archive/FrontendBuild.ts), so every component on the page shares hooks, context and the scheduler.
Object.assign(window, {
  React,
  ReactDOM: { ...ReactDOM, createRoot: ReactDOMClient.createRoot, hydrateRoot: ReactDOMClient.hydrateRoot },
  ReactJSXRuntime
})
