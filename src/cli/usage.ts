/**
 * The usage text of every command, printed by `ledgerflow <command> --help` (exit 0) and with a
 * usage error (exit 2). `ledgerflow --help` prints them all.
 */

const CONNECTION =
  'Connection: --url URL --client-id ID --client-secret SECRET, or LEDGERFLOW_URL,\n' +
  'LEDGERFLOW_CLIENT_ID, LEDGERFLOW_CLIENT_SECRET.';

export const USERS_USAGE = `usage: ledgerflow users create --email E --role R [--role R2] [--name N]
       ledgerflow users set-password EMAIL [--password-stdin]
  On the store named by DATABASE_URL.
  create        creates a user. When DATABASE_URL is a SQLite file that does not exist yet, a
                new store is created there (and said so on standard error).
  set-password  gives a user a new password (12 to 256 characters), asked twice on a terminal,
                and ends the user's sign-in sessions; the store must exist. Use it when the
                first administrator's generated password was lost.
  --password-stdin  read the new password from standard input (one trailing line break is
                    dropped) instead of asking`;

export const CREDENTIALS_USAGE = `usage: ledgerflow credentials create --owner EMAIL [--name N] [--expires-in-days N]
       ledgerflow credentials list
       ledgerflow credentials revoke CLIENT_ID
  On the store named by DATABASE_URL, which must exist. create prints the secret once.`;

export const AUDIT_USAGE = `usage: ledgerflow audit verify [--file FILE]
       ledgerflow audit export [--after-seq N] [--output FILE]
  On the store named by DATABASE_URL, which must exist.
  verify   checks the audit chain from its first entry to its head: every hash, link and
           position; exit 1 names the first bad entry (changed, deleted, reordered, inserted).
           With --file, checks an export file instead (no store needed); a file that starts
           past position 1 is checked from its first entry.
  export   writes the audit trail as JSON Lines, oldest first (to standard output without
           --output or with --output -); --after-seq N starts after position N.`;

export const CONFIG_USAGE = `usage: ledgerflow config pull FILE
       ledgerflow config push FILE [--dry-run] [--yes] [--keep-data]
       ledgerflow config wipe [--dry-run] [--yes]
       ledgerflow config revisions [--limit 20 | --all] [--json]
       ledgerflow config diff N M [--json]
  pull       download the configuration as pretty JSON (FILE - for standard output)
  push       upload FILE; validation errors are printed as PATH: MESSAGE, one per line
  wipe       delete the configuration
  revisions  the configuration revisions, newest first (one per push and wipe)
  diff       the changes from revision N to revision M, one per line: + PATH: NEW,
             - PATH: OLD, ~ PATH: OLD -> NEW (PATH a JSON Pointer)
  push and wipe delete the processing data (sessions, records, journals, processing errors):
  they first show what would be deleted and ask on a terminal; elsewhere they need --yes.
  --keep-data  push without deleting anything; refused (PATH: REASON per blocking change)
               when stored records or journals would no longer fit the new configuration
  --dry-run    only validate and show what would be deleted; change nothing
  --yes        go ahead without asking
  --json       print revisions as one JSON object per line, a diff as the service's answer
${CONNECTION}`;

export const INGEST_USAGE = `usage: ledgerflow ingest FILE --namespace NS --entity E [--name N] [--format json|ndjson|csv]
         [--parallel 4] [--timeout PT15M] [--partial] [--session ID] [--keep-open]
  Uploads a JSON (array, or object with a "data" array), NDJSON or CSV file in chunks under
  1 MiB over parallel connections, then closes the session and prints its counters. Failed
  records are named by their place in the file: the line (NDJSON; CSV, whose header is line 1)
  or the index in the JSON array (from 0).
  --partial     keep the valid records of a chunk that has invalid ones (else the chunk is
                refused whole, and the session is left open so that the upload can be completed)
  --session ID  add to this open session instead of opening one; chunks of the same file sent
                to it before are recognised and not stored twice, so re-running the same
                command with --partial --session ID completes a partly refused upload
  --keep-open   leave the session open at the end (to add more files with --session)
  --name N      name of the session opened (not of one given with --session) and prefix of
                the chunk names (default for both: the file name)
${CONNECTION}`;

export const CORRECT_USAGE = `usage: ledgerflow correct --rollback OLD --post NEW [--format json|ndjson|csv]
  Corrects business events already posted: sends OLD, the events as they were posted, as a
  session of ledger/businessEventRollback and waits for its processing (each record withdraws
  the journals of an identical event by reversal journals); if any record fails (no identical
  event, or rolled back already), stops with exit 1, naming each record and its code, and NEW is
  not sent. Otherwise sends NEW, the corrected events, as a session of ledger/businessEvent and
  waits for it to post. Files are read as ingest reads them.
${CONNECTION}`;

export const INGESTIONS_USAGE = `usage: ledgerflow ingestions show ID
       ledgerflow ingestions errors ID
       ledgerflow ingestions close ID
  show    the session's state, counters, processing status and first errors
  errors  every failed record of the session (validation and processing), page by page
  close   close an open session
${CONNECTION}`;

/** `journals reverse` alone: its usage errors print this. */
const JOURNALS_REVERSE_TEXT = `usage: ledgerflow journals reverse SELECTION --reason TEXT [--posting-date YYYY-MM-DD] [--dry-run]
         [--idempotency-key KEY]
  SELECTION is one of:
    --journal ID                   these journals (repeat the option for several)
    --ingestion ID                 every journal the ingestion session produced
    --origin-journal ID            every journal of this origin journal id
    --accounting-config NAME --from YYYY-MM-DD --to YYYY-MM-DD
                                   journals of the accounting configuration with core dates
                                   from --from to --to, both included
  Each selected journal gets one reversal journal (the same lines on the other side), dated on
  its own core date when its period is open, else on the first day of the earliest open period
  (or on --posting-date). A journal is reversed at most once: those reversed before are listed,
  not reversed again. Nothing is edited or deleted.
  --reason TEXT        why (required; kept with the reversal and in the audit log)
  --dry-run            print what would be reversed (journals, lines, totals) and change nothing
  --idempotency-key K  repeat a request safely (the command makes one when not given)`;

export const JOURNALS_REVERSE_USAGE = `${JOURNALS_REVERSE_TEXT}
${CONNECTION}`;

export const JOURNALS_USAGE = `usage: ledgerflow journals export --format csv|jsonl|ledger [--output FILE] [--status posted|unposted]
         [--accounting-config NAME] [--from YYYY-MM-DD] [--to YYYY-MM-DD]
  --output FILE  write to FILE (replaced only when the export is complete); - or no --output
                 for standard output
  --from D       first core date exported (included)
  --to D         first core date not exported (excluded), as the API's from and to:
                 --from 2026-11-01 --to 2026-12-01 is November
  The ledger format names accounts ACCOUNTINGCONFIG:NODE VALUES:ACCOUNT, so that a plain
  hledger balance keeps accounting configurations and nodes apart, and marks posted journals
  cleared (*) and unposted ones pending (!): hledger -f FILE balance --cleared gives the
  balances of the service (posted journals only).

${JOURNALS_REVERSE_TEXT.replace('usage: ', '       ')}
${CONNECTION}`;

export const EXTRACT_USAGE = `usage: ledgerflow extract pull CONFIG --output FILE [--ack]
  Reads the extract of CONFIG (an id, or the name of an Active extraction configuration) into
  FILE, in its format (JSON Lines or CSV). FILE appears once the extract is complete; until then
  the pull writes FILE.partial and FILE.extract-state, and run again it goes on from the last page
  written. --ack then acknowledges the read of an incremental extract, so the next pull starts
  after it; without --ack the next pull answers the same rows again.
${CONNECTION}`;

export const WEBHOOKS_USAGE = `usage: ledgerflow webhooks list
       ledgerflow webhooks create --endpoint URL --event TYPE [--event TYPE2] [--description D]
       ledgerflow webhooks rotate-secret [--overlap-seconds 86400]
       ledgerflow webhooks deliveries [--subscription ID] [--status pending|delivering|delivered|failed]
         [--limit 50]
       ledgerflow webhooks redeliver DELIVERY_ID
       ledgerflow webhooks redeliver --subscription ID --since 2026-11-25T00:00:00Z
  list           the subscriptions: id, status (FLAGGED after a delivery failed for good), URL,
                 types
  create         subscribe the receiver at URL (https) to event types. Without a signing secret
                 yet (a new instance), creates it first and prints it this once, for the
                 receivers that verify the signatures; when one exists, says so, without it
  rotate-secret  replace the signing secret with a new one, printed this once; the old one goes
                 on signing beside it for --overlap-seconds (default 86400, at most 604800)
  deliveries     the newest deliveries with their attempts, last answer and next attempt
  redeliver      attempt one delivery again now, or every event of a subscription since a time
${CONNECTION}`;

export const APPROVALS_USAGE = `usage: ledgerflow approvals list [--status pending-approval|all|STATUS] [--limit 50 | --all] [--json]
       ledgerflow approvals show ID [--json]
       ledgerflow approvals approve ID [--json]
       ledgerflow approvals reject ID --reason TEXT [--json]
       ledgerflow approvals cancel ID [--json]
  Four-eyes approval: when the service requires it (APPROVAL_REQUIRED), config push, config wipe
  and journals reverse make a request that waits for another user instead of running.
  list     requests, newest first: those pending approval unless --status says otherwise;
           each with its maker and what it would change (an upload's first changed paths,
           + added, - removed, ~ changed; a reversal's selection and reason, where the request
           carries them; a reopening's period and reason) and its dry run
  show     one request: its maker, what it would change (every path of an upload the service
           lists), its dry run, document hash and what became of it. Read it before deciding
  approve  run it now, as your action on behalf of its maker (never your own request); refused
           when the data it binds to moved since it was made (the request becomes invalid)
  reject   refuse it with a reason; it never runs
  cancel   withdraw your own pending request
  approve, reject and cancel first print whose request they decided and what it changes.
${CONNECTION}`;

export const BALANCES_USAGE = `usage: ledgerflow balances [--accounting-config NAME] [--as-of YYYY-MM-DD] [--account A]
         [--currency C]
  Balances of posted journals per accounting configuration, node, account and currency, as
  exact decimals (debits positive). --as-of: core dates up to and including it.
${CONNECTION}`;

export const PROCESSING_ERRORS_USAGE = `usage: ledgerflow processing-errors [--ingestion ID] [--code C] [--limit 100 | --all]
  Records that produced no journal, with the rule each broke, one line each; on standard error
  the total, how many more there are, and the count per code.
  --limit N  show at most N (default 100)
  --all      show every one
${CONNECTION}`;

export const ERRORS_USAGE = `usage: ledgerflow errors reprocess [--dry-run] [--ingestion ID] [--entity E] [--code C]
         [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--all] [--no-wait]
       ledgerflow errors run ID
       ledgerflow errors schedule [show]
       ledgerflow errors schedule set [--daily HH:MM | --every MINUTES | --disabled]
         [--max-attempts N]
  reprocess  run the selected open processing errors again under the current configuration,
             wait for the run (unless --no-wait) and print how many posted and how many still
             fail, by code; exit 1 when some still fail. Name a selection or give --all.
             --from / --to: when the errors were first recorded (from included, to excluded).
  --dry-run  run the engine over the same records and print what a run would do; change nothing
  run        a run's progress and outcome
  schedule   the automatic runs: daily at HH:MM UTC, every MINUTES (at least 180) or disabled,
             and the most attempts per record (manual runs count); set keeps what it is not given
${CONNECTION}`;

export const PERIODS_USAGE = `usage: ledgerflow periods list --accounting-config NAME [--node FIELD=VALUE ...]
         [--from YYYY-MM-DD --to YYYY-MM-DD] [--json]
       ledgerflow periods close|lock --accounting-config NAME --node FIELD=VALUE ... --period YYYY-MM-01
       ledgerflow periods reopen --accounting-config NAME --node FIELD=VALUE ... --period YYYY-MM-01
         --reason TEXT
       ledgerflow periods snapshots --accounting-config NAME --node FIELD=VALUE ... --period YYYY-MM-01
       ledgerflow periods snapshots --snapshot ID [--json]
  list       each period of each node (or of --node) with its state (open, grace, closed,
             locked) and why; by default the 12 periods up to the current one
  close      close a period early; refused while records wait for processing or journals
             dated in it are unposted (the counts are printed); keeps a trial-balance snapshot
  lock       lock a period: no posting, no reversal and no posting date override into it
  reopen     open a closed or locked period again (--reason required); then
             \`ledgerflow errors reprocess --code closed-period\` posts the records it refused
  snapshots  the trial-balance snapshots of a period, or one with its balances
  --node FIELD=VALUE  one per node field, e.g. --node legalEntity=LF_NL --node branch=AMS
  --period D          the first day of the period
${CONNECTION}`;

/** The usage of every command, for `ledgerflow --help`. */
export const USAGE = `usage: ledgerflow <command> [--help]

On the store (DATABASE_URL; the store used is printed on standard error):
  users create --email E --role R [--role R2] [--name N]
  users set-password EMAIL [--password-stdin]
  credentials create --owner EMAIL [--name N] [--expires-in-days N]
  credentials list
  credentials revoke CLIENT_ID
  audit verify [--file FILE]  check the audit chain (or an export file); names the first bad entry
  audit export [--after-seq N] [--output FILE]
                              the audit trail as JSON Lines, oldest first

Against a running service (--url, --client-id, --client-secret or LEDGERFLOW_URL,
LEDGERFLOW_CLIENT_ID, LEDGERFLOW_CLIENT_SECRET):
  config pull FILE            download the configuration as pretty JSON (FILE - for stdout)
  config push FILE [--dry-run] [--yes] [--keep-data]
                              upload it; shows and confirms the processing data it deletes
                              (with --keep-data it deletes nothing, when the data allows)
  config revisions [--limit 20 | --all] [--json]
                              the configuration revisions, newest first
  config diff N M [--json]    the changes from revision N to revision M
  config wipe [--dry-run] [--yes]
                              delete the configuration and the processing data
  ingest FILE --namespace NS --entity E [--name N] [--format json|ndjson|csv]
         [--parallel 4] [--timeout PT15M] [--partial] [--session ID] [--keep-open]
                              upload a JSON, NDJSON or CSV file in chunks under 1 MiB
  correct --rollback OLD --post NEW [--format json|ndjson|csv]
                              roll back the business events of OLD, then post NEW
  ingestions show|errors|close ID
                              a session's state and errors; close an open session
  journals export --format csv|jsonl|ledger [--output FILE] [--status posted|unposted]
         [--accounting-config NAME] [--from YYYY-MM-DD] [--to YYYY-MM-DD]
  journals reverse SELECTION --reason TEXT [--posting-date D] [--dry-run]
                              withdraw journals with reversal journals, at most once each
  extract pull CONFIG --output FILE [--ack]
                              the rows of an extraction configuration, resumable; --ack
                              acknowledges an incremental read once FILE is complete
  webhooks list | create --endpoint URL --event TYPE ... | rotate-secret
         | deliveries [--subscription ID] | redeliver DELIVERY_ID
         | redeliver --subscription ID --since TIME
                              webhook subscriptions (the signing secret made with the first),
                              a new signing secret, deliveries, redelivery
  balances [--accounting-config NAME] [--as-of YYYY-MM-DD] [--account A] [--currency C]
  processing-errors [--ingestion ID] [--code C] [--limit 100 | --all]
  errors reprocess [--dry-run] [--ingestion ID] [--entity E] [--code C] [--from D] [--to D]
         [--all] [--no-wait]      run failed records again; --dry-run shows what would post
  errors run ID | errors schedule [show | set ...]
                              a reprocessing run; the schedule of automatic runs
  approvals list|show|approve|reject|cancel
                              four-eyes approval requests: list, read, decide, withdraw
  periods list|close|lock|reopen|snapshots --accounting-config NAME [--node F=V ...] ...
                              periods per node: state and why, close early, lock, reopen,
                              trial-balance snapshots

ledgerflow <command> --help prints the details of a command.
Exit status: 0 success, 1 refused request or failed records, 2 bad usage.`;
