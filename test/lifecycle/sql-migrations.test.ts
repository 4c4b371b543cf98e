import { describe, expect, it } from "vitest"
import { parseSqlMigration } from "../../src/lifecycle/Migrations.js"
import { splitSqlScript } from "../../src/lifecycle/SqlScript.js"
import { runHost, tempDirsPerTest } from "../support/cli.js"
import { makeDatabase, testDialects } from "../support/databases.js"
import { sqlMigration, writeExtension } from "../support/extensions.js"

// `.sql` migrations are cut into statements where the database itself would cut them: trigger and routine
// bodies, PostgreSQL dollar-quoted bodies, strings and comments keep their `;`. Checked on the text, and by
// installing and removing an extension whose migrations hold each of them on every dialect of the run.

const temp = tempDirsPerTest()

describe("splitting a .sql script", () => {
  it("keeps what the line-based split did: one statement per `;`, comment lines dropped, sections apart", () => {
    const text = sqlMigration(
      "-- the notes\nCREATE TABLE ext_notes (id INTEGER PRIMARY KEY, body VARCHAR(100) NOT NULL);\nINSERT INTO ext_notes (id, body) VALUES (1, 'first');",
      "DROP TABLE ext_notes;"
    )
    for (const dialect of ["sqlite", "mysql", "pg"] as const) {
      expect(parseSqlMigration(text, dialect)).toEqual({
        up: ["CREATE TABLE ext_notes (id INTEGER PRIMARY KEY, body VARCHAR(100) NOT NULL)", "INSERT INTO ext_notes (id, body) VALUES (1, 'first')"],
        down: ["DROP TABLE ext_notes"]
      })
    }
  })

  it("a `;` in a comment, a string or a quoted name ends nothing; a last statement needs no `;`", () => {
    const text = "-- a comment; with a semicolon\nINSERT INTO t VALUES ('a;b', \"c;d\"); /* block; comment */ SELECT 1 -- trailing;\n; SELECT 'it''s; fine'"
    expect(splitSqlScript(text, "sqlite")).toEqual([
      "INSERT INTO t VALUES ('a;b', \"c;d\")",
      "SELECT 1 -- trailing;",
      "SELECT 'it''s; fine'"
    ])
    expect(splitSqlScript("INSERT INTO t VALUES ('it\\'s; fine'); # a; comment\nSELECT `a;b` FROM t;", "mysql")).toEqual([
      "INSERT INTO t VALUES ('it\\'s; fine')",
      "SELECT `a;b` FROM t"
    ])
    expect(splitSqlScript("SELECT E'it\\'s; fine'; /* nested /* ; */ still; comment */ SELECT 2;", "pg")).toEqual([
      "SELECT E'it\\'s; fine'",
      "SELECT 2"
    ])
  })

  it("a trigger body runs to its END, whatever it holds (CASE … END, names containing end/begin)", () => {
    const trigger = [
      "CREATE TRIGGER ext_stamp AFTER INSERT ON ext_items FOR EACH ROW BEGIN",
      "  UPDATE ext_items SET legend = CASE WHEN NEW.qty > 1 THEN 'many;' ELSE 'one' END WHERE id = NEW.id;",
      "  INSERT INTO ext_log (begin_at) VALUES (1);",
      "END;",
      "SELECT 1;"
    ].join("\n")
    for (const dialect of ["sqlite", "mysql"] as const) {
      expect(splitSqlScript(trigger, dialect)).toEqual([trigger.slice(0, trigger.indexOf("END;") + 3), "SELECT 1"])
    }
  })

  it("MySQL routines: nested BEGIN, END IF / END LOOP / END CASE, DEFINER; and the client's DELIMITER lines", () => {
    const procedure = [
      "CREATE DEFINER=`root`@`localhost` PROCEDURE ext_fill(n INT)",
      "BEGIN",
      "  DECLARE i INT DEFAULT 0;",
      "  fill: LOOP",
      "    IF i >= n THEN LEAVE fill; END IF;",
      "    CASE WHEN i = 0 THEN BEGIN INSERT INTO t VALUES (0); END; ELSE INSERT INTO t VALUES (i); END CASE;",
      "    SET i = i + 1;",
      "  END LOOP fill;",
      "END"
    ].join("\n")
    expect(splitSqlScript(`${procedure};\nCALL ext_fill(3);`, "mysql")).toEqual([procedure, "CALL ext_fill(3)"])
    expect(splitSqlScript(`DELIMITER //\n${procedure} //\nDELIMITER ;\nCALL ext_fill(3);`, "mysql")).toEqual([procedure, "CALL ext_fill(3)"])
  })

  it("PostgreSQL: dollar-quoted bodies with tags, and BEGIN ATOMIC bodies", () => {
    const fn = "CREATE FUNCTION ext_touch() RETURNS trigger AS $body$\nBEGIN\n  NEW.note := 'x; $$ y';\n  RETURN NEW;\nEND;\n$body$ LANGUAGE plpgsql"
    const atomic = "CREATE OR REPLACE FUNCTION ext_one() RETURNS int LANGUAGE sql BEGIN ATOMIC\n  SELECT 1;\nEND"
    expect(splitSqlScript(`${fn};\n${atomic};\nSELECT $$a;b$$, $1;`, "pg")).toEqual([fn, atomic, "SELECT $$a;b$$, $1"])
  })

  it("BEGIN and END outside a routine are statements of their own (transactions)", () => {
    expect(splitSqlScript("BEGIN;\nCREATE TABLE t (id INT);\nEND;", "pg")).toEqual(["BEGIN", "CREATE TABLE t (id INT)", "END"])
  })
})

/** A trigger that copies each note into ext_log, with `;` inside its body and in comments around it. */
const triggerMigrations = (dialect: string): Record<string, string> => {
  const table = sqlMigration(
    "-- notes; and their log\nCREATE TABLE ext_notes (id INTEGER PRIMARY KEY, body VARCHAR(100) NOT NULL);\nCREATE TABLE ext_log (body VARCHAR(100) NOT NULL, legend VARCHAR(10));",
    "DROP TABLE ext_log;\nDROP TABLE ext_notes;"
  )
  const sqliteTrigger = sqlMigration(
    [
      "/* copy; each note */",
      "CREATE TRIGGER ext_copy AFTER INSERT ON ext_notes FOR EACH ROW BEGIN",
      "  INSERT INTO ext_log (body, legend) VALUES (NEW.body, CASE WHEN NEW.id > 1 THEN 'later;' ELSE 'first' END); -- keep;",
      "END;"
    ].join("\n"),
    "DROP TRIGGER ext_copy;"
  )
  const mysqlTrigger = sqlMigration(
    [
      "/* copy; each note */",
      "CREATE TRIGGER ext_copy AFTER INSERT ON ext_notes FOR EACH ROW BEGIN",
      "  INSERT INTO ext_log (body, legend) VALUES (NEW.body, CASE WHEN NEW.id > 1 THEN 'later;' ELSE 'first' END); -- keep;",
      "  IF NEW.id < 0 THEN SET @ext_negative = 1; END IF;",
      "END;"
    ].join("\n"),
    "DROP TRIGGER ext_copy;"
  )
  const pgTrigger = sqlMigration(
    [
      "-- the function body is dollar-quoted; it holds `;`",
      "CREATE FUNCTION ext_copy_note() RETURNS trigger AS $$",
      "BEGIN",
      "  INSERT INTO ext_log (body, legend) VALUES (NEW.body, CASE WHEN NEW.id > 1 THEN 'later;' ELSE 'first' END);",
      "  RETURN NEW;",
      "END;",
      "$$ LANGUAGE plpgsql;",
      "CREATE TRIGGER ext_copy AFTER INSERT ON ext_notes FOR EACH ROW EXECUTE FUNCTION ext_copy_note();"
    ].join("\n"),
    "DROP TRIGGER ext_copy ON ext_notes;\nDROP FUNCTION ext_copy_note();"
  )
  return {
    "001_notes.sql": table,
    [`002_copy.${dialect}.sql`]: dialect === "pg" ? pgTrigger : dialect === "mysql" ? mysqlTrigger : sqliteTrigger,
    "003_seed.sql": sqlMigration("INSERT INTO ext_notes (id, body) VALUES (1, 'a; b');\nINSERT INTO ext_notes (id, body) VALUES (2, 'c');", "DELETE FROM ext_notes;")
  }
}

describe("trigger, function and comment migrations on every dialect", () => {
  it(`install runs them whole and remove takes them back (${testDialects().join(", ")})`, async () => {
    for (const dialect of testDialects()) {
      const { database, drop } = await makeDatabase(dialect)
      try {
        const root = temp("host-root-")
        const src = writeExtension(temp("host-src-"), { id: "acme/notes", version: "1.0.0", migrations: triggerMigrations(dialect) })
        const run = await runHost(["add", src, "--root", root], { env: database.env })
        expect(run.stderr, dialect).not.toContain("error")
        expect(run.code, dialect).toBe(0)
        expect(await database.query(root, "SELECT body, legend FROM ext_log ORDER BY body"), dialect).toEqual([
          { body: "a; b", legend: "first" },
          { body: "c", legend: "later;" }
        ])
        expect((await runHost(["remove", "acme/notes", "--root", root], { env: database.env })).code, dialect).toBe(0)
        expect(await database.tables(root), dialect).toEqual(["host_activity_logs", "host_extensions", "host_migrations", "host_settings"])
      } finally {
        await drop()
      }
    }
  })
})
