import { Link } from "react-router-dom"
import { Icon } from "../ui.js"

// The panel's 404 and 403 pages: an unknown path, a server the user may not see (every path under it),
// a server page the user lacks the permission for.

const ErrorPage = ({ code, message, title }: { readonly code: string; readonly title: string; readonly message: string }) => (
  <div className="mx-auto flex max-w-lg flex-col items-center px-4 py-20 text-center" data-host-error={code}>
    <p className="host-error-code">{code}</p>
    <h1 className="mt-3 text-xl font-semibold text-host-text-primary">{title}</h1>
    <p className="mt-2 text-sm text-host-text-muted">{message}</p>
    <Link className="host-button host-button--primary mt-6" to="/">
      <Icon name="back" /> Back to your servers
    </Link>
  </div>
)

export const NotFound = () => (
  <ErrorPage code="404" message="There is nothing at this address, or you do not have access to it." title="Page not found" />
)

export const Forbidden = ({ permission }: { readonly permission?: string }) => (
  <ErrorPage
    code="403"
    message={permission === undefined
      ? "You do not have permission to view this page."
      : `You do not have permission to view this page (it needs "${permission}").`}
    title="Access denied"
  />
)
