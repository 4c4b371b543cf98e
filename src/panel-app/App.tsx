import { useEffect } from "react"
import { Route, Routes, useLocation } from "react-router-dom"
import { announceContext } from "./host.js"
import { TopBar } from "./layout.js"
import { AccountArea } from "./pages/account.js"
import { DashboardArea } from "./pages/dashboard.js"
import { NotFound } from "./pages/errors.js"
import { ServerArea } from "./pages/server/ServerArea.js"

// The panel's routes (docs/frontend.md "Reference panel"): the same paths the server answers with the
// page shell, so a reload anywhere lands on the same page.

const Unknown = () => {
  const location = useLocation()
  useEffect(() => announceContext(null), [location.pathname])
  return <NotFound />
}

export const App = () => (
  <div className="flex min-h-screen flex-col">
    <TopBar />
    <main className="flex-1" id="host-main">
      <Routes>
        <Route element={<DashboardArea />} path="/" />
        <Route element={<DashboardArea extensionPage />} path="/ext/:vendor/:name/*" />
        <Route element={<ServerArea />} path="/server/:uuid/*" />
        <Route element={<AccountArea />} path="/account/*" />
        <Route element={<Unknown />} path="*" />
      </Routes>
    </main>
  </div>
)
