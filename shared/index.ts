// The keyspace and enqueue package: runtime-agnostic (no Node built-ins, no Workers APIs).
export type { Arg, Connection, Outcome, Reply, ScriptCommand } from './connection.js';
export { RestConnection, connectRest } from './connections/rest.js';
export type { RestOptions } from './connections/rest.js';
export { BatchError, MINT_TRIES, enqueue, enqueueNew } from './enqueue.js';
export { admitMany, enqueueGroupedMany, enqueueMany, scheduleMany } from './batch.js';
export type { AdmitInput, AdmitResult, AdmitVerdict, BatchOnce, GroupedJobInput, ScheduledJobInput } from './batch.js';
export type { Job, JobInput, JobResult, Payload, Verdict } from './enqueue.js';
export * from './errors.js';
export {
  ID_ALPHABET,
  ID_CEILING,
  ID_LENGTH,
  NODE_MAX,
  SNOWFLAKE_EPOCH_MS,
  checkIdShape,
  createMinter,
  decodeId,
  drawNode,
  encodeId,
  idShapeProblem,
  mintId,
  parseNodePool,
  processMinter,
  remint,
  setMinter,
  snowflakeOf,
} from './ids.js';
export type { DecodedId, Minter, MinterOptions } from './ids.js';
export {
  QUEUE_MAX_LENGTH,
  SCHEDULE_NAME_MAX_LENGTH,
  dedupIdOf,
  dedupKey,
  dependenciesKey,
  enqueueKeys,
  flowOutboxKey,
  genqueueKeys,
  groupActiveKey,
  groupKeys,
  groupLimitKey,
  jobKey,
  laneKey,
  metaKey,
  pausedGroupsKey,
  pendingKey,
  processedKey,
  queueInfoKeys,
  repeatKey,
  repeatKeys,
  ringKey,
  scheduleKey,
  scheduleKeys,
  sha256Hex,
  validateGroup,
  validateId,
  validateQueue,
  validateScheduleName,
  wakeKey,
} from './keyspace.js';
export { TTL_MAX_SECONDS, enqueueOnce } from './enqueue-once.js';
export type { OnceOptions } from './enqueue-once.js';
export { jobDetail, jobState } from './job-state.js';
export type { JobDetail, JobState } from './job-state.js';
export { removeJob } from './job-remove.js';
export type { RemoveOutcome } from './job-remove.js';
export { promoteJob } from './job-promote.js';
export { rescheduleJob } from './job-reschedule.js';
export type { RescheduleOutcome } from './job-reschedule.js';
export { SCHEDULE_AT_MAX_MS, SCHEDULE_DELAY_MAX_MS, schedule, scheduleOnce } from './schedule.js';
export type { ScheduleOnceOptions, ScheduleOptions, ScheduleResult, ScheduleVerdict } from './schedule.js';
export { enqueueGrouped, enqueueGroupedOnce } from './lanes.js';
export type { GroupedOnceOptions } from './lanes.js';
export { FLOW_MAX_CHILDREN, addFlow } from './flow.js';
export { cancelSchedule, pauseSchedule, registerSchedule, resumeSchedule, runScheduleNow } from './schedules.js';
export type { RegisterOptions, RegisterVerdict } from './schedules.js';
export { PAUSED_SCORE, SCHEDULE_PAGE_MAX, isScheduleCursor, listSchedules, readSchedule } from './schedule-view.js';
export type { SchedulePage, ScheduleView } from './schedule-view.js';
export type { FailurePolicy, FlowChildInput, FlowInput, FlowJob, FlowResult, PartlyLanded } from './flow.js';
export { pauseQueue } from './queue-pause.js';
export { GROUP_SETTING_MAX, groupViewOf, readGroup, setGroup } from './group-control.js';
export type { GroupChange, GroupView } from './group-control.js';
export { QUEUE_INFO_PAGE, QUEUE_INFO_PAGE_MAX, queueInfo } from './queue-info.js';
export type { QueueCounts, QueueInfo } from './queue-info.js';
export {
  allScripts,
  controlScripts,
  enqueueOnceScript,
  enqueueScript,
  flowChildScript,
  flowParentScript,
  flowScript,
  genqueueOnceScript,
  genqueueScript,
  groupReadScript,
  groupSetScript,
  jobPromoteScript,
  jobRemoveScript,
  jobRescheduleScript,
  jobStateScript,
  queueInfoScript,
  queuePauseScript,
  repeatCancelScript,
  repeatMoveScript,
  repeatPageScript,
  repeatReadScript,
  repeatRegisterScript,
  scheduleOnceScript,
  scheduleScript,
} from './scripts.js';
export type { Script } from './scripts.js';
