/**
 * The write gate's refusals in people's words, per language: as the protocol says them (to a host
 * program and whoever reads its log), the Claude Code hook's additions, and the ways a person
 * grants writes (the `/approve` line where the hooks are installed, the `longrun grant` command
 * and the status page everywhere else). The reason codes (`data.reason`) are never translated.
 */
import type { Message } from "./render.ts";

/** The protocol's refusal for each gate reason (`checkGate`): the English is the core's message. */
export const GATE_MESSAGES = {
  "gate.read_only": {
    en: "Write refused: {action} needs a write lease and the task is read-only (turn {turn}); finish the discussion, then have the host call writes.enable with a reason in this turn",
    zh: "写入被拒绝：{action} 需要写租约，而任务当前是只读的（第 {turn} 轮）；先把讨论完成，再由宿主在本轮调用 writes.enable 并写明理由",
    ko: "쓰기 거부: {action}에는 쓰기 임대가 필요한데 작업이 읽기 전용입니다(라운드 {turn}); 논의를 마친 뒤 호스트가 이번 라운드에 이유와 함께 writes.enable을 호출하게 하세요",
    example: { action: '"Write src/a.ts"', turn: 3 },
  },
  "gate.stale_lease": {
    en: "Write refused: {action}: the write lease was granted in turn {lease_turn} and this is turn {turn}, so it has expired and is now revoked; have the host call writes.enable again in this turn",
    zh: "写入被拒绝：{action}：写租约是在第 {lease_turn} 轮授予的，现在是第 {turn} 轮，因此它已过期并被收回；请宿主在本轮再次调用 writes.enable",
    ko: "쓰기 거부: {action}: 쓰기 임대는 라운드 {lease_turn}에 승인되었고 지금은 라운드 {turn}이므로 만료되어 회수되었습니다; 호스트가 이번 라운드에 writes.enable을 다시 호출하게 하세요",
    example: { action: '"Write src/a.ts"', lease_turn: 3, turn: 4 },
  },
  "gate.not_in_progress": {
    en: "Write refused: {action}: the task is {status}, not in_progress; transition it back to in_progress, then have the host grant a new lease",
    zh: "写入被拒绝：{action}：任务的状态是 {status}，不是 in_progress（进行中）；先把它改回 in_progress，再由宿主授予新的写租约",
    ko: "쓰기 거부: {action}: 작업 상태가 in_progress(진행 중)가 아니라 {status}입니다; in_progress로 되돌린 뒤 호스트가 새 쓰기 임대를 승인하게 하세요",
    example: { action: '"Write src/a.ts"', status: "paused" },
  },
  "gate.expired": {
    en: "Write refused: {action}: the write lease expired at {expires_at} (its time to live ran out); have the host call writes.enable again",
    zh: "写入被拒绝：{action}：写租约已于 {expires_at} 过期（有效时间已用完）；请宿主再次调用 writes.enable",
    ko: "쓰기 거부: {action}: 쓰기 임대가 {expires_at}에 만료되었습니다(유효 시간이 끝남); 호스트가 writes.enable을 다시 호출하게 하세요",
    example: { action: '"Write src/a.ts"', expires_at: "2026-12-01T12:01:00.000Z" },
  },
  "gate.uses_exhausted": {
    en: "Write refused: {action}: the write lease allowed {max_uses} write(s) and all were used; have the host call writes.enable again",
    zh: "写入被拒绝：{action}：写租约允许写入 {max_uses} 次，已全部用完；请宿主再次调用 writes.enable",
    ko: "쓰기 거부: {action}: 쓰기 임대가 허용한 쓰기 {max_uses}회를 모두 사용했습니다; 호스트가 writes.enable을 다시 호출하게 하세요",
    example: { action: '"Write src/a.ts"', max_uses: 1 },
  },
  "gate.out_of_scope": {
    en: "Write refused: {action} is outside the lease's scope {scope}; stay inside it, or ask the host for a lease that covers this action",
    zh: "写入被拒绝：{action} 超出了写租约的范围 {scope}；请留在范围之内，或请宿主授予覆盖此操作的写租约",
    ko: "쓰기 거부: {action}은(는) 쓰기 임대의 범위 {scope} 밖입니다; 범위 안에서 작업하거나, 이 작업을 포함하는 쓰기 임대를 호스트에게 요청하세요",
    example: { action: '"Write README.md"', scope: '["src/**"]' },
  },
} as const satisfies Record<string, Message>;

/** How a person grants writes, in each setup: appended to a refusal, or the clause an agent is told to ask for. */
export const GRANT_MESSAGES = {
  /** Appended by the protocol's front ends (stdio, HTTP) to a gate refusal. */
  "grant.person": {
    en: '; a person can also grant it from the project: `longrun grant "reason"` in a terminal there, or the status page (`longrun open`)',
    zh: "；也可以由人在项目中授权：在项目目录的终端里运行 `longrun grant \"理由\"`，或使用状态页（`longrun open`）",
    ko: '; 사람이 프로젝트에서 직접 승인할 수도 있습니다: 프로젝트 디렉터리의 터미널에서 `longrun grant "이유"`를 실행하거나 상태 페이지(`longrun open`)를 사용하세요',
    example: {},
  },
  /** What an MCP agent asks for where the hooks are installed. */
  "ask.approve": {
    en: 'ask the user to approve (they type {marker} and what to allow at the start of their next message, e.g. "{marker} edit src/")',
    zh: "请用户批准（用户在下一条消息开头输入 {marker} 和允许的内容，例如“{marker} edit src/”）",
    ko: '사용자에게 승인을 요청하세요(사용자가 다음 메시지 맨 앞에 {marker}와 허용할 내용을 입력합니다. 예: "{marker} edit src/")',
    example: { marker: "/approve" },
  },
  "ask.approve_again": {
    en: 'ask the user to approve again (they type {marker} and what to allow at the start of their next message, e.g. "{marker} edit src/")',
    zh: "请用户再次批准（用户在下一条消息开头输入 {marker} 和允许的内容，例如“{marker} edit src/”）",
    ko: '사용자에게 다시 승인을 요청하세요(사용자가 다음 메시지 맨 앞에 {marker}와 허용할 내용을 입력합니다. 예: "{marker} edit src/")',
    example: { marker: "/approve" },
  },
  /** What an MCP agent asks for without the hooks: the person's command, or the status page. */
  "ask.cli": {
    en: 'ask the user to approve (they run `longrun grant "what to allow"` in a terminal in this project, or grant it on the status page that `longrun open` opens)',
    zh: "请用户批准（用户在本项目目录的终端里运行 `longrun grant \"允许的内容\"`，或在 `longrun open` 打开的状态页上授权）",
    ko: '사용자에게 승인을 요청하세요(사용자가 이 프로젝트 디렉터리의 터미널에서 `longrun grant "허용할 내용"`을 실행하거나, `longrun open`이 여는 상태 페이지에서 승인합니다)',
    example: {},
  },
  "ask.cli_again": {
    en: 'ask the user to approve again (they run `longrun grant "what to allow"` in a terminal in this project, or grant it on the status page that `longrun open` opens)',
    zh: "请用户再次批准（用户在本项目目录的终端里运行 `longrun grant \"允许的内容\"`，或在 `longrun open` 打开的状态页上授权）",
    ko: '사용자에게 다시 승인을 요청하세요(사용자가 이 프로젝트 디렉터리의 터미널에서 `longrun grant "허용할 내용"`을 실행하거나, `longrun open`이 여는 상태 페이지에서 승인합니다)',
    example: {},
  },
} as const satisfies Record<string, Message>;

/** What the Claude Code hook says beside the protocol's refusal (src/hooks/claude.ts). */
export const HOOK_MESSAGES = {
  "hook.denied": {
    en: "{detail}",
    zh: "已拒绝这次调用：{detail}",
    ko: "이 호출은 거부되었습니다: {detail}",
    example: { detail: "Bash has no command, so the call cannot be checked" },
  },
  /** The Claude Code hook: the user's `/approve` line. */
  "hook.approve_line": {
    en: "; the user approves writes for one turn by starting a line of their message with {marker}",
    zh: "；用户在消息中以 {marker} 开头写一行，即可授权本轮写入",
    ko: "; 사용자가 메시지의 한 줄을 {marker}(으)로 시작하면 이번 라운드의 쓰기가 승인됩니다",
    example: { marker: "/approve" },
  },
  "hook.leave_sandbox": {
    en: "commands may not leave the sandbox: the sandbox is what keeps longrun's files out of reach",
    zh: "命令不得离开沙箱：正是沙箱让 longrun 的文件无法被触及",
    ko: "명령은 샌드박스를 벗어날 수 없습니다: 샌드박스가 longrun의 파일에 닿지 못하게 지킵니다",
    example: {},
  },
  "hook.cwd_inside": {
    en: "the working directory {cwd} is inside longrun's files; work from the project directory",
    zh: "工作目录 {cwd} 位于 longrun 自己的文件之中；请在项目目录中工作",
    ko: "작업 디렉터리 {cwd}이(가) longrun의 파일 안에 있습니다; 프로젝트 디렉터리에서 작업하세요",
    example: { cwd: "/home/me/project/.longrun" },
  },
  "hook.protected_read": {
    en: "{tool} reads {what} ({path}), which agents may not touch under any lease",
    zh: "{tool} 要读取 {what}（{path}），无论有没有写租约，智能体都不得触碰它",
    ko: "{tool}이(가) {what}({path})을(를) 읽으려 합니다. 에이전트는 어떤 쓰기 임대로도 이것을 건드릴 수 없습니다",
    example: { tool: "Read", what: "longrun's state, lock, settings and tokens", path: "/p/.longrun/http.json" },
  },
  "hook.protected_write": {
    en: "{tool} writes {what} ({path}), which agents may not touch under any lease",
    zh: "{tool} 要写入 {what}（{path}），无论有没有写租约，智能体都不得触碰它",
    ko: "{tool}이(가) {what}({path})에 쓰려 합니다. 에이전트는 어떤 쓰기 임대로도 이것을 건드릴 수 없습니다",
    example: { tool: "Write", what: "Claude Code's personal settings (longrun's hooks)", path: "/p/.claude/settings.local.json" },
  },
  "hook.outside_project": {
    en: "{tool} writes {path}, outside the project {root}; a lease covers files inside the root only",
    zh: "{tool} 要写入项目 {root} 之外的 {path}；写租约只覆盖项目之内的文件",
    ko: "{tool}이(가) 프로젝트 {root} 밖의 {path}에 쓰려 합니다; 쓰기 임대는 프로젝트 안의 파일만 허용합니다",
    example: { tool: "Write", path: "/etc/hosts", root: "/home/me/project" },
  },
  "hook.unreadable_command": {
    en: "longrun cannot read this command with certainty ({why}), so it is refused; write it plainly",
    zh: "longrun 无法确定地读懂这条命令（{why}），因此拒绝执行；请写得更直白一些",
    ko: "longrun이 이 명령을 확실하게 읽을 수 없어({why}) 거부합니다; 단순하게 다시 쓰세요",
    example: { why: "an unterminated quote" },
  },
  "hook.under_any_lease": {
    en: "{why} (refused under any lease)",
    zh: "{why}（无论有没有写租约都会被拒绝）",
    ko: "{why}(어떤 쓰기 임대로도 거부됩니다)",
    example: { why: "rm removes .longrun/state.json, longrun's state" },
  },
  "hook.background": {
    en: "{tool} runs this command in the background, and a command that writes may not outlive the call that the lease allowed; run it in the foreground",
    zh: "{tool} 会在后台运行这条命令，而会写入的命令不能比写租约允许的那次调用存活得更久；请在前台运行",
    ko: "{tool}이(가) 이 명령을 백그라운드에서 실행합니다. 쓰기를 하는 명령은 쓰기 임대가 허용한 호출보다 오래 남을 수 없습니다; 포그라운드에서 실행하세요",
    example: { tool: "Bash" },
  },
  "hook.control_chars": {
    en: "the command contains control characters (they can hide what it does)",
    zh: "命令中含有控制字符（它们可能掩盖命令真正做的事）",
    ko: "명령에 제어 문자가 들어 있습니다(명령이 하는 일을 숨길 수 있습니다)",
    example: {},
  },
  "hook.not_read_only": {
    en: "; this command is not read-only ({why}); in a read-only turn Bash runs only plain read commands (ls, cat, grep, git status/log/diff, …), or use the Read tool to look at files",
    zh: "；这条命令不是只读的（{why}）；在只读的轮次里，Bash 只运行简单的读取命令（ls、cat、grep、git status/log/diff 等），也可以用 Read 工具查看文件",
    ko: "; 이 명령은 읽기 전용이 아닙니다({why}); 읽기 전용 라운드에서 Bash는 단순한 읽기 명령(ls, cat, grep, git status/log/diff 등)만 실행합니다. 파일을 보려면 Read 도구를 사용하세요",
    example: { why: "rm changes files" },
  },
  "hook.scoped_bash": {
    en: "; Bash can write anywhere, so a scoped lease covers it only when its scope includes Bash ({marker} scope=…,Bash); use Edit or Write inside the scope",
    zh: "；Bash 可以写入任何位置，所以限定范围的写租约只有在范围包含 Bash 时才覆盖它（{marker} scope=…,Bash）；请在范围内使用 Edit 或 Write",
    ko: "; Bash는 어디에나 쓸 수 있으므로, 범위가 지정된 쓰기 임대는 범위에 Bash가 포함될 때만 Bash를 허용합니다({marker} scope=…,Bash); 범위 안에서는 Edit 또는 Write를 사용하세요",
    example: { marker: "/approve" },
  },
  "hook.no_task": {
    en: "no task in {root}, so nothing may be written",
    zh: "{root} 中没有任务，因此不能写入任何内容",
    ko: "{root}에 작업이 없으므로 아무것도 쓸 수 없습니다",
    example: { root: "/home/me/project" },
  },
  "hook.read_tools": {
    en: "; use the Read tool to look at files",
    zh: "；查看文件请使用 Read 工具",
    ko: "; 파일을 보려면 Read 도구를 사용하세요",
    example: {},
  },
  "hook.turn_not_recorded": {
    en: "the last turn ended but longrun could not record it yet ({why}), so writes are refused until the next message begins a turn",
    zh: "上一轮已经结束，但 longrun 还没能记录下来（{why}），因此在下一条消息开始新的一轮之前，写入一律被拒绝",
    ko: "지난 라운드가 끝났지만 longrun이 아직 기록하지 못했습니다({why}); 다음 메시지가 새 라운드를 시작할 때까지 쓰기는 거부됩니다",
    example: { why: "the disk is full" },
  },
} as const satisfies Record<string, Message>;
