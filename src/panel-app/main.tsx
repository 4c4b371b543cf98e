import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { BrowserRouter } from "react-router-dom"
import { App } from "./App.js"

// The panel app's entry: loaded last on every panel page (after the vendor script, the bridge and the
// extension bundles), it renders into the shell's #app element.
const element = document.getElementById("app")
if (element === null) throw new Error("the panel page has no #app element")
createRoot(element).render(
  <StrictMode>
    <BrowserRouter>
      <App />
    </BrowserRouter>
  </StrictMode>
)
