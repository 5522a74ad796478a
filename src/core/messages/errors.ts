/**
 * The protocol's error messages (src/core/errors.ts' classes and the JSON-RPC layer's own) in
 * people's words, per language, and a headline per kind for a message no template here covers
 * (the English detail then follows it). `kind`, `code` and `data` are never translated.
 */
import type { Message } from "./render.ts";

export const ERROR_MESSAGES = {
  "err.no_task": {
    en: "No active task in this root: call task.start first",
    zh: "本项目中没有进行中的任务：请先调用 task.start",
    ko: "이 프로젝트에는 진행 중인 작업이 없습니다: 먼저 task.start를 호출하세요",
    example: {},
  },
  "err.no_task_closed": {
    en: "No open task: task {task_id} is {status}; call task.start to begin a new one",
    zh: "没有未结束的任务：任务 {task_id} 已是 {status}；请调用 task.start 开始新任务",
    ko: "열린 작업이 없습니다: 작업 {task_id}은(는) {status} 상태입니다; 새 작업은 task.start로 시작하세요",
    example: { task_id: "T_20261201_120000_ab12", status: "completed" },
  },
  "err.transition": {
    en: "Transition refused: a task that is {from} cannot become {to}; it may become {allowed}",
    zh: "状态变更被拒绝：{from} 状态的任务不能变为 {to}；它可以变为 {allowed}",
    ko: "상태 변경 거부: {from} 상태의 작업은 {to}(으)로 바꿀 수 없습니다; 가능한 상태: {allowed}",
    example: { from: "paused", to: "completed", allowed: "in_progress, blocked or failed" },
  },
  "err.transition_final": {
    en: "Transition refused: the task is already {from}, which is final; start a new task with task.start",
    zh: "状态变更被拒绝：任务已经是 {from}，这是最终状态；请用 task.start 开始新任务",
    ko: "상태 변경 거부: 작업이 이미 최종 상태인 {from}입니다; task.start로 새 작업을 시작하세요",
    example: { from: "completed" },
  },
  "err.checkpoint_write": {
    en: "Checkpoint not saved: the memory write failed ({cause}), so no checkpoint text was produced; {where}{lease}",
    zh: "检查点未保存：记忆写入失败（{cause}），因此没有生成检查点文本；{where}{lease}",
    ko: "체크포인트가 저장되지 않았습니다: 메모리 쓰기가 실패해({cause}) 체크포인트 텍스트를 만들지 않았습니다; {where}{lease}",
    example: { cause: "disk full", where: "it is kept in /p/.longrun/pending_checkpoint.json and the next task.resume saves it", lease: "; the write lease has ended" },
  },
  "err.checkpoint_kept": {
    en: "it is kept in {path} and the next task.resume saves it",
    zh: "它保存在 {path}，下一次 task.resume 会把它存入记忆",
    ko: "{path}에 보관되어 있으며 다음 task.resume 때 저장됩니다",
    example: { path: "/p/.longrun/pending_checkpoint.json" },
  },
  "err.checkpoint_lost": {
    en: "it could not be kept in {path} either: nothing of it was saved; fix the storage, then checkpoint again",
    zh: "它也无法保存在 {path}：什么都没有保存下来；请先修好存储，再重新保存检查点",
    ko: "{path}에도 보관하지 못했습니다: 아무것도 저장되지 않았습니다; 저장소를 고친 뒤 체크포인트를 다시 저장하세요",
    example: { path: "/p/.longrun/pending_checkpoint.json" },
  },
  "err.lease_ended": {
    en: "; the write lease has ended",
    zh: "；写租约已结束",
    ko: "; 쓰기 임대는 끝났습니다",
    example: {},
  },
  "err.lease_not_ended": {
    en: "; the write lease could not be ended in the database: this process refuses writes, but stop the agent until task.resume succeeds",
    zh: "；写租约无法在数据库中结束：本进程会拒绝写入，但在 task.resume 成功之前请停止智能体",
    ko: "; 데이터베이스에서 쓰기 임대를 끝내지 못했습니다: 이 프로세스는 쓰기를 거부하지만, task.resume이 성공할 때까지 에이전트를 멈추세요",
    example: {},
  },
  "err.state_corrupt": {
    en: "State file is unreadable: {path}: {detail}; it was left untouched. Call task.recover to rebuild the task from its newest checkpoint in memory (the bad file is kept aside)",
    zh: "状态文件无法读取：{path}：{detail}；文件保持原样。调用 task.recover 可以从记忆中最新的检查点重建任务（损坏的文件会另外保留）",
    ko: "상태 파일을 읽을 수 없습니다: {path}: {detail}; 파일은 그대로 두었습니다. task.recover를 호출하면 메모리의 최신 체크포인트로 작업을 다시 만듭니다(손상된 파일은 따로 보관됩니다)",
    example: { path: "/p/.longrun/state.json", detail: "not JSON" },
  },
  "err.stale_epoch": {
    en: "Run {run_id} refused a write at epoch {epoch}: it is now owned at epoch {current_epoch}; this executor must stop, or run.claim the run again",
    zh: "运行 {run_id} 拒绝了纪元 {epoch} 的写入：它现在属于纪元 {current_epoch}；这个执行者必须停止，或用 run.claim 重新认领该运行",
    ko: "실행 {run_id}이(가) 에포크 {epoch}의 쓰기를 거부했습니다: 지금은 에포크 {current_epoch}이(가) 소유합니다; 이 실행자는 멈추거나 run.claim으로 실행을 다시 가져와야 합니다",
    example: { run_id: "R_0001", epoch: 1, current_epoch: 2 },
  },
  "err.host_method": {
    en: "Refused: {method} is a host-side method and this caller is the agent; only the host (the user's side) may call it{instead}",
    zh: "已拒绝：{method} 是宿主端的方法，而调用方是智能体；只有宿主（用户一侧）可以调用它{instead}",
    ko: "거부됨: {method}은(는) 호스트 쪽 메서드이고 이 호출자는 에이전트입니다; 호스트(사용자 쪽)만 호출할 수 있습니다{instead}",
    example: { method: "writes.enable", instead: "; use writes.request to ask for a lease" },
  },
  "err.request_instead": {
    en: "; use writes.request to ask for a lease",
    zh: "；请用 writes.request 申请写租约",
    ko: "; writes.request로 쓰기 임대를 요청하세요",
    example: {},
  },
  "err.limit": {
    en: "Limit exceeded: {field} is {actual}{unit}, more than the most allowed, {limit}{unit}; send less or split it",
    zh: "超出限制：{field} 为 {actual}{unit}，超过允许的最大值 {limit}{unit}；请减少内容或拆开发送",
    ko: "한도 초과: {field}이(가) {actual}{unit}(으)로 허용 최대치 {limit}{unit}을(를) 넘습니다; 줄이거나 나누어 보내세요",
    example: { field: "content", actual: 300000, limit: 262144, unit: " characters" },
  },
  "err.not_found": {
    en: "Not found: no {what} {id} in this root",
    zh: "未找到：本项目中没有 {what} {id}",
    ko: "찾을 수 없음: 이 프로젝트에 {what} {id}이(가) 없습니다",
    example: { what: "memory", id: '"S_0009"' },
  },
  "err.storage": {
    en: "Storage failed at {path}: {what} ({detail})",
    zh: "存储失败：{path}：{what}（{detail}）",
    ko: "저장소 오류: {path}: {what}({detail})",
    example: { path: "/p/memory.db", what: "the disk (or the database's size limit) is full: free space, then retry", detail: "SQLITE_FULL" },
  },
  "storage.disk_full": {
    en: "the disk (or the database's size limit) is full: free space, then retry",
    zh: "磁盘（或数据库的大小上限）已满：请腾出空间后重试",
    ko: "디스크(또는 데이터베이스 크기 한도)가 가득 찼습니다: 공간을 비운 뒤 다시 시도하세요",
    example: {},
  },
  "storage.read_only": {
    en: "it cannot be written (read-only file system or permissions): make it writable, then retry",
    zh: "无法写入（只读文件系统或权限不足）：改为可写后重试",
    ko: "쓸 수 없습니다(읽기 전용 파일 시스템 또는 권한): 쓸 수 있게 한 뒤 다시 시도하세요",
    example: {},
  },
  "storage.io": {
    en: "the file system reported an I/O error: check the disk, then retry",
    zh: "文件系统报告了 I/O 错误：请检查磁盘后重试",
    ko: "파일 시스템이 I/O 오류를 보고했습니다: 디스크를 확인한 뒤 다시 시도하세요",
    example: {},
  },
  "storage.missing": {
    en: "a file longrun needs is gone or was replaced: see docs/reliability.md",
    zh: "longrun 需要的文件不见了或被替换了：见 docs/reliability.md",
    ko: "longrun에 필요한 파일이 없어졌거나 바뀌었습니다: docs/reliability.md를 보세요",
    example: {},
  },
  "storage.too_many_files": {
    en: "this process has too many open files: raise its limit (ulimit -n), or serve fewer roots at once (--max-roots)",
    zh: "本进程打开的文件太多：请提高上限（ulimit -n），或同时服务更少的项目（--max-roots）",
    ko: "이 프로세스가 연 파일이 너무 많습니다: 한도를 올리거나(ulimit -n) 동시에 서비스하는 루트 수를 줄이세요(--max-roots)",
    example: {},
  },
  "storage.unreachable": {
    en: "the libSQL server is unreachable: nothing was written there and writes are refused until it answers again; check that it runs and the URL, then retry",
    zh: "无法连接 libSQL 服务器：那里什么都没有写入，在它恢复响应之前写入都会被拒绝；请确认它在运行、URL 正确，然后重试",
    ko: "libSQL 서버에 연결할 수 없습니다: 그곳에는 아무것도 쓰이지 않았고, 서버가 다시 응답할 때까지 쓰기는 거부됩니다; 서버가 실행 중인지와 URL을 확인한 뒤 다시 시도하세요",
    example: {},
  },
  "storage.refused": {
    en: "the libSQL server refused the request (authentication or permissions): check LONGRUN_STORE_TOKEN",
    zh: "libSQL 服务器拒绝了请求（认证或权限问题）：请检查 LONGRUN_STORE_TOKEN",
    ko: "libSQL 서버가 요청을 거부했습니다(인증 또는 권한): LONGRUN_STORE_TOKEN을 확인하세요",
    example: {},
  },
  "err.memory_corrupt": {
    en: "Memory is unreadable: {path} ({detail}). Nothing was written. Stop the processes using this root and restore memory.db from a backup; or, to go on without it, run `longrun recover --accept-memory --root <dir>` (the damaged file is kept aside, and a new memory begins)",
    zh: "记忆无法读取：{path}（{detail}）。什么都没有写入。请停止使用本项目的进程，并从备份恢复 memory.db；如果要不用它继续，请运行 `longrun recover --accept-memory --root <dir>`（损坏的文件会另外保留，并开始新的记忆）",
    ko: "메모리를 읽을 수 없습니다: {path}({detail}). 아무것도 쓰이지 않았습니다. 이 루트를 쓰는 프로세스를 멈추고 백업에서 memory.db를 복원하세요; 메모리 없이 계속하려면 `longrun recover --accept-memory --root <dir>`를 실행하세요(손상된 파일은 따로 보관되고 새 메모리가 시작됩니다)",
    example: { path: "/p/memory.db", detail: "file is not a database" },
  },
  "err.content_missing": {
    en: "Content missing: the stored body of {item} {state}: {path}; the task and the item's record are intact. Restore that file from a backup, or {again}",
    zh: "内容缺失：{item} 存储的正文{state}：{path}；任务和该条目的记录都完好。请从备份恢复该文件，或{again}",
    ko: "내용 없음: {item}의 저장된 본문이 {state}: {path}; 작업과 항목 기록은 온전합니다. 백업에서 그 파일을 복원하거나 {again}",
    example: { item: "artifact report v1", state: "is gone", path: "/p/raw_data/ab/cd", again: "artifact.put stores it again as a new version" },
  },
  "content.missing": { en: "is gone", zh: "已经不见了", ko: "사라졌습니다", example: {} },
  "content.mismatch": {
    en: "no longer matches its sha256 (damaged)",
    zh: "与它的 sha256 不再一致（已损坏）",
    ko: "sha256과 더 이상 맞지 않습니다(손상됨)",
    example: {},
  },
  "content.again_context": {
    en: "context.put stores it again under a new ref",
    zh: "用 context.put 以新的引用重新存储",
    ko: "context.put으로 새 참조에 다시 저장하세요",
    example: {},
  },
  "content.again_artifact": {
    en: "artifact.put stores it again as a new version",
    zh: "用 artifact.put 作为新版本重新存储",
    ko: "artifact.put으로 새 버전으로 다시 저장하세요",
    example: {},
  },
  "err.idempotency": {
    en: "Refused: idempotency_key {key} was already used for {first}, so this call was not carried out; use a new key for a new call, or repeat the first call exactly to get its answer",
    zh: "已拒绝：idempotency_key {key} 已经用于 {first}，因此这次调用没有执行；新的调用请用新的键，或者原样重复第一次调用以取得它的答复",
    ko: "거부됨: idempotency_key {key}은(는) 이미 {first}에 사용되었으므로 이 호출은 실행되지 않았습니다; 새 호출에는 새 키를 쓰거나, 첫 호출을 그대로 반복해 그 응답을 받으세요",
    example: { key: '"k1"', first: "task.checkpoint with other params" },
  },
  "idempotency.other_params": {
    en: "{method} with other params",
    zh: "参数不同的 {method}",
    ko: "다른 매개변수의 {method}",
    example: { method: "task.checkpoint" },
  },
  "err.parse": {
    en: "Parse error: the message is not valid JSON; send one JSON object per line",
    zh: "解析错误：消息不是有效的 JSON；请每行发送一个 JSON 对象",
    ko: "구문 오류: 메시지가 올바른 JSON이 아닙니다; 한 줄에 JSON 객체 하나씩 보내세요",
    example: {},
  },
  "err.method_not_found": {
    en: "Method not found: {method}; system.describe lists the methods",
    zh: "找不到方法：{method}；system.describe 会列出所有方法",
    ko: "메서드를 찾을 수 없음: {method}; system.describe가 메서드 목록을 보여 줍니다",
    example: { method: '"task.nope"' },
  },
} as const satisfies Record<string, Message>;

/** The headline of each kind, in front of the English detail where no template above fits. */
export const KIND_MESSAGES = {
  "kind.write_gate_violation": { en: "{detail}", zh: "写入被拒绝：{detail}", ko: "쓰기 거부: {detail}", example: { detail: "Write refused: …" } },
  "kind.transition_error": { en: "{detail}", zh: "状态变更被拒绝：{detail}", ko: "상태 변경 거부: {detail}", example: { detail: "Transition refused: …" } },
  "kind.checkpoint_write_error": { en: "{detail}", zh: "检查点未保存：{detail}", ko: "체크포인트가 저장되지 않음: {detail}", example: { detail: "Checkpoint not saved: …" } },
  "kind.state_corrupt": { en: "{detail}", zh: "状态文件无法读取：{detail}", ko: "상태 파일을 읽을 수 없음: {detail}", example: { detail: "State file is unreadable: …" } },
  "kind.no_active_task": { en: "{detail}", zh: "没有进行中的任务：{detail}", ko: "진행 중인 작업 없음: {detail}", example: { detail: "No active task …" } },
  "kind.stale_epoch": { en: "{detail}", zh: "运行已归新的执行者所有：{detail}", ko: "실행의 소유자가 바뀜: {detail}", example: { detail: "Run R_0001 refused …" } },
  "kind.budget_exhausted": { en: "{detail}", zh: "预算已用完：{detail}", ko: "예산 소진: {detail}", example: { detail: "Budget exhausted: cost …" } },
  "kind.unauthorized": { en: "{detail}", zh: "无权执行：{detail}", ko: "권한 없음: {detail}", example: { detail: "Refused: …" } },
  "kind.limit_exceeded": { en: "{detail}", zh: "超出限制：{detail}", ko: "한도 초과: {detail}", example: { detail: "Limit exceeded: …" } },
  "kind.conflict": { en: "{detail}", zh: "冲突：{detail}", ko: "충돌: {detail}", example: { detail: "Conflict: …" } },
  "kind.not_found": { en: "{detail}", zh: "未找到：{detail}", ko: "찾을 수 없음: {detail}", example: { detail: "Not found: …" } },
  "kind.storage_error": { en: "{detail}", zh: "存储失败：{detail}", ko: "저장소 오류: {detail}", example: { detail: "Storage failed …" } },
  "kind.memory_corrupt": { en: "{detail}", zh: "记忆无法读取：{detail}", ko: "메모리를 읽을 수 없음: {detail}", example: { detail: "Memory is unreadable: …" } },
  "kind.content_missing": { en: "{detail}", zh: "内容缺失：{detail}", ko: "내용 없음: {detail}", example: { detail: "Content missing: …" } },
  "kind.idempotency_conflict": { en: "{detail}", zh: "幂等键冲突：{detail}", ko: "멱등 키 충돌: {detail}", example: { detail: "Refused: idempotency_key …" } },
  "kind.parse_error": { en: "{detail}", zh: "解析错误：{detail}", ko: "구문 오류: {detail}", example: { detail: "Parse error: …" } },
  "kind.invalid_request": { en: "{detail}", zh: "无效的请求：{detail}", ko: "잘못된 요청: {detail}", example: { detail: "Invalid Request: …" } },
  "kind.method_not_found": { en: "{detail}", zh: "找不到方法：{detail}", ko: "메서드를 찾을 수 없음: {detail}", example: { detail: "Method not found: …" } },
  "kind.invalid_params": { en: "{detail}", zh: "参数无效：{detail}", ko: "잘못된 매개변수: {detail}", example: { detail: "Invalid params: …" } },
  "kind.internal": { en: "{detail}", zh: "内部错误：{detail}", ko: "내부 오류: {detail}", example: { detail: "Internal error: …" } },
} as const satisfies Record<string, Message>;
