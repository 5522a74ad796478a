/**
 * Refusals as an agent on MCP reads them (src/mcp/errors.ts picks and fills them): the tool to
 * call next by its MCP name, and what to ask the user for. The clauses that depend on the tools
 * offered (`call {tool}` or what to ask the user instead) are messages of their own.
 */
import type { Message } from "./render.ts";

export const AGENT_MESSAGES = {
  "agent.gate.read_only": {
    en: "Not approved: {action} is a change, and the user has not approved changes in this turn (turn {turn}). Do not make it yet; {ask}. {request}reading stays allowed",
    zh: "未获批准：{action} 是一项改动，而用户在本轮（第 {turn} 轮）还没有批准改动。先不要做；{ask}。{request}读取仍然允许",
    ko: "승인되지 않음: {action}은(는) 변경이며, 사용자가 이번 라운드(라운드 {turn})에 변경을 승인하지 않았습니다. 아직 하지 마세요; {ask}. {request}읽기는 계속 허용됩니다",
    example: { action: '"edit src/a.ts"', turn: 3, ask: "ask the user to approve (…)", request: "writes_request records what you need; " },
  },
  "agent.request_hint": {
    en: "writes_request records what you need; ",
    zh: "writes_request 可以记录你需要做的改动；",
    ko: "writes_request로 필요한 내용을 기록할 수 있습니다; ",
    example: {},
  },
  "agent.gate.stale_lease": {
    en: "Not approved: the user's approval was for turn {lease_turn} and this is turn {turn}, so it has ended. {ask}",
    zh: "未获批准：用户的批准只对第 {lease_turn} 轮有效，现在是第 {turn} 轮，批准已经结束。{ask}",
    ko: "승인되지 않음: 사용자의 승인은 라운드 {lease_turn}에 대한 것이었고 지금은 라운드 {turn}이므로 끝났습니다. {ask}",
    example: { lease_turn: 3, turn: 4, ask: "Ask the user to approve again (…)" },
  },
  "agent.gate.expired": {
    en: "Not approved: the user's approval ran out at {expires_at}. {ask}",
    zh: "未获批准：用户的批准已于 {expires_at} 到期。{ask}",
    ko: "승인되지 않음: 사용자의 승인이 {expires_at}에 만료되었습니다. {ask}",
    example: { expires_at: "2026-12-01T12:01:00.000Z", ask: "Ask the user to approve again (…)" },
  },
  "agent.gate.uses_exhausted": {
    en: "Not approved: the user's approval allowed {max_uses} change(s) and all were used. {ask}",
    zh: "未获批准：用户的批准允许 {max_uses} 次改动，已全部用完。{ask}",
    ko: "승인되지 않음: 사용자의 승인이 허용한 변경 {max_uses}회를 모두 사용했습니다. {ask}",
    example: { max_uses: 1, ask: "Ask the user to approve again (…)" },
  },
  "agent.gate.out_of_scope": {
    en: "Not approved: {action} is outside what the user approved ({scope}). Stay inside it, or {ask}",
    zh: "未获批准：{action} 超出了用户批准的范围（{scope}）。请留在范围之内，或{ask}",
    ko: "승인되지 않음: {action}은(는) 사용자가 승인한 범위({scope}) 밖입니다. 범위 안에서 작업하거나, {ask}",
    example: { action: '"edit docs/a.md"', scope: "src/**", ask: "ask the user to approve (…)" },
  },
  "agent.gate.not_in_progress": {
    en: "Not approved: the task is not in progress. {resume}, then {ask}",
    zh: "未获批准：任务不在进行中。{resume}，然后{ask}",
    ko: "승인되지 않음: 작업이 진행 중이 아닙니다. {resume}. 그다음 {ask}",
    example: { resume: "Call task_resume if it is paused, else …", ask: "ask the user to approve (…)" },
  },
  "agent.call": { en: "call {tool}", zh: "调用 {tool}", ko: "{tool}을(를) 호출하세요", example: { tool: "task_start" } },
  "agent.resume_user": { en: "ask the user to resume the task", zh: "请用户恢复任务", ko: "사용자에게 작업 재개를 요청하세요", example: {} },
  "agent.resume_user_it": { en: "ask the user to resume it", zh: "请用户恢复它", ko: "사용자에게 재개를 요청하세요", example: {} },
  "agent.transition_tool": {
    en: 'call task_transition with to: "in_progress"',
    zh: '调用 task_transition，参数 to: "in_progress"',
    ko: 'to: "in_progress"로 task_transition을 호출하세요',
    example: {},
  },
  "agent.transition_user": {
    en: "ask the user to move it back to in progress",
    zh: "请用户把它改回进行中",
    ko: "사용자에게 진행 중으로 되돌려 달라고 요청하세요",
    example: {},
  },
  "agent.resume_either": {
    en: "{resume} if it is paused, else {transition}",
    zh: "如果任务已暂停，{resume}；否则{transition}",
    ko: "일시 중지 상태라면 {resume}. 아니라면 {transition}",
    example: { resume: "call task_resume", transition: 'call task_transition with to: "in_progress"' },
  },
  "agent.run_not_granted": {
    en: "Not approved yet: run {run_id} is your request, and the user has not approved it, so it begins nothing. Wait for the user to approve it (maybe narrowed) or refuse it; {status} when it is running",
    zh: "尚未获批：运行 {run_id} 是你的请求，用户还没有批准，所以它什么都不会开始。请等待用户批准（可能会缩小范围）或拒绝；它何时开始运行，{status}",
    ko: "아직 승인되지 않음: 실행 {run_id}은(는) 당신의 요청이며 사용자가 승인하지 않았으므로 아무것도 시작되지 않습니다. 사용자가 승인(범위를 좁힐 수도 있음)하거나 거절할 때까지 기다리세요; 실행이 시작되었는지는 {status}",
    example: { run_id: "R_0001", status: "call run_get" },
  },
  "agent.run_status_tool": { en: "call run_get", zh: "调用 run_get 查看", ko: "run_get으로 확인하세요", example: {} },
  "agent.run_status_user": { en: "the run's status tells", zh: "看运行的状态即可", ko: "실행 상태로 알 수 있습니다", example: {} },
  "agent.parked": {
    en: "Run {run_id} waits for the user: only the user wakes it, with the answer. Wait for it",
    zh: "运行 {run_id} 在等待用户：只有用户能带着答复唤醒它。请等待",
    ko: "실행 {run_id}은(는) 사용자를 기다리고 있습니다: 사용자만 답을 주며 깨울 수 있습니다. 기다리세요",
    example: { run_id: "R_0001" },
  },
  "agent.no_task_closed": {
    en: "No open task: task {task_id} is {status}. {start} to begin a new one",
    zh: "没有未结束的任务：任务 {task_id} 已是 {status}。要开始新任务，请{start}",
    ko: "열린 작업이 없습니다: 작업 {task_id}은(는) {status} 상태입니다. 새 작업을 시작하려면 {start}",
    example: { task_id: "T_1", status: "completed", start: "Call task_start" },
  },
  "agent.no_task": {
    en: "No task yet: {start} with the user's request first",
    zh: "还没有任务：请先{start}，以用户的请求为任务内容",
    ko: "아직 작업이 없습니다: 먼저 사용자의 요청으로 {start}",
    example: { start: "call task_start" },
  },
  "agent.start_user": { en: "ask the user to start a task", zh: "让用户开始一个任务", ko: "사용자에게 작업을 시작해 달라고 요청하세요", example: {} },
  "agent.start_user_new": { en: "ask the user to start a new task", zh: "让用户开始一个新任务", ko: "사용자에게 새 작업을 시작해 달라고 요청하세요", example: {} },
  "agent.transition_final": {
    en: "The task is already {from}: nothing more can happen to it. For new work, {start}",
    zh: "任务已经是 {from}：它不会再有任何变化。要做新的工作，请{start}",
    ko: "작업이 이미 {from} 상태입니다: 더 이상 아무것도 바뀌지 않습니다. 새 작업을 하려면 {start}",
    example: { from: "completed", start: "call task_start" },
  },
  "agent.limit": {
    en: "Too large: {field} is {actual}{unit}, the most is {limit}{unit}; send less or split it",
    zh: "内容过大：{field} 为 {actual}{unit}，最多 {limit}{unit}；请减少内容或拆开发送",
    ko: "너무 큽니다: {field}이(가) {actual}{unit}이며 최대 {limit}{unit}입니다; 줄이거나 나누어 보내세요",
    example: { field: '"content"', actual: 12, limit: 10, unit: " characters" },
  },
  "agent.not_in_progress": {
    en: "The task {task_id} is {status}, not in progress: {resume} first",
    zh: "任务 {task_id} 是 {status}，不在进行中：先{resume}",
    ko: "작업 {task_id}은(는) 진행 중이 아니라 {status} 상태입니다: 먼저 {resume}",
    example: { task_id: "T_1", status: "paused", resume: "call task_resume" },
  },
  "agent.checkpoint_write": {
    en: "Checkpoint not saved: project memory could not be written ({cause}). {kept}; the approval to write has ended. Tell the user that storage needs attention",
    zh: "检查点未保存：项目记忆无法写入（{cause}）。{kept}；写入的批准已经结束。请告诉用户存储需要处理",
    ko: "체크포인트가 저장되지 않았습니다: 프로젝트 메모리에 쓸 수 없습니다({cause}). {kept}; 쓰기 승인은 끝났습니다. 저장소를 확인해야 한다고 사용자에게 알리세요",
    example: { cause: "disk full", kept: "It is kept, and task_resume saves it once storage works" },
  },
  "agent.checkpoint_kept_tool": {
    en: "It is kept, and task_resume saves it once storage works",
    zh: "它已被保留，存储恢复后 task_resume 会保存它",
    ko: "보관되어 있으며, 저장소가 정상이 되면 task_resume이 저장합니다",
    example: {},
  },
  "agent.checkpoint_kept": {
    en: "It is kept, and the next resume saves it once storage works",
    zh: "它已被保留，存储恢复后下一次恢复任务时会保存它",
    ko: "보관되어 있으며, 저장소가 정상이 되면 다음 재개 때 저장됩니다",
    example: {},
  },
  "agent.checkpoint_lost": { en: "It could not be kept either", zh: "它也没能保留下来", ko: "보관하지도 못했습니다", example: {} },
  "agent.state_corrupt": {
    en: "The task's state file is unreadable ({path}); nothing was changed. Tell the user; {recover} to rebuild the task from its last checkpoint in memory",
    zh: "任务的状态文件无法读取（{path}）；什么都没有改变。请告诉用户；{recover}，即可从记忆中的最后一个检查点重建任务",
    ko: "작업의 상태 파일을 읽을 수 없습니다({path}); 아무것도 바뀌지 않았습니다. 사용자에게 알리세요; 메모리의 마지막 체크포인트로 작업을 다시 만들려면 {recover}",
    example: { path: "/p/.longrun/state.json", recover: "call task_recover" },
  },
  "agent.recover_user": {
    en: "they can run `longrun recover`",
    zh: "用户可以运行 `longrun recover`",
    ko: "사용자가 `longrun recover`를 실행할 수 있습니다",
    example: {},
  },
} as const satisfies Record<string, Message>;
