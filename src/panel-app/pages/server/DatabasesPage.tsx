import { databases } from "../../demo.js"
import { Slot } from "../../Slot.js"
import { Card, PageTitle } from "../../ui.js"
import { type PageProps, Table } from "./shared.js"

export const DatabasesPage = ({ server }: PageProps) => (
  <>
    <PageTitle description="MySQL databases for this server's plugins." icon="database">Databases</PageTitle>
    <Slot id="server.databases.before" />
    <Card actions={<button className="host-button host-button--primary" type="button">New database</button>} title="2 of 4 databases">
      <Table head={["Name", "Endpoint", "Username", "Connections"]}>
        {databases(server.uuid).map((database) => (
          <tr key={database.name}>
            <td className="font-medium text-host-text-primary">{database.name}</td>
            <td className="font-mono text-xs">{database.host}</td>
            <td className="font-mono text-xs">{database.username}</td>
            <td>{database.connections}</td>
          </tr>
        ))}
      </Table>
    </Card>
    <Slot id="server.databases.after" />
  </>
)
