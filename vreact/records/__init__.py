"""The records of a run folder: the folder (database name, lock), the store and its migrations,
and one typed reader of a run (:func:`read_run`)."""

from vreact.records.faults import RETRYABLE_CRASHES, StorageFault, io_cause, io_error
from vreact.records.folder import DB_NAME, LOCK_NAME, RunDirBusy, exclusive
from vreact.records.migrations import MIGRATIONS
from vreact.records.reader import (
    AttemptRecord,
    CallRecord,
    DiagnosisRecord,
    EventRecord,
    LedgerRecord,
    RunRecords,
    RunRow,
    RunSummary,
    StepRecord,
    TaskRecord,
    VerdictRecord,
    latest_run_id,
    read_run,
    run_list,
)
from vreact.records.store import (
    DamagedRecords,
    ForeignRecords,
    NeedsMigration,
    NewerRecords,
    RecordsError,
    Store,
    open_to_read,
)

__all__ = [
    "DB_NAME",
    "LOCK_NAME",
    "MIGRATIONS",
    "RETRYABLE_CRASHES",
    "AttemptRecord",
    "CallRecord",
    "DamagedRecords",
    "DiagnosisRecord",
    "EventRecord",
    "ForeignRecords",
    "LedgerRecord",
    "NeedsMigration",
    "NewerRecords",
    "RecordsError",
    "RunDirBusy",
    "RunRecords",
    "RunRow",
    "RunSummary",
    "StepRecord",
    "StorageFault",
    "Store",
    "TaskRecord",
    "VerdictRecord",
    "exclusive",
    "io_cause",
    "io_error",
    "latest_run_id",
    "open_to_read",
    "read_run",
    "run_list",
]
