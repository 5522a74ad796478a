/**
 * The status page's fixed words (src/http/page/html.ts: the shell and the login page), per
 * language. The page's live parts (the task, the lease, runs) are drawn by its browser script.
 */
import type { Message } from "./render.ts";

export const PAGE_MESSAGES = {
  "page.title": { en: "longrun status", zh: "longrun 状态", ko: "longrun 상태", example: {} },
  "page.skip": { en: "Skip to the status", zh: "跳到状态", ko: "상태로 건너뛰기", example: {} },
  "page.connecting": { en: "connecting…", zh: "正在连接…", ko: "연결 중…", example: {} },
  "page.root": { en: "Root", zh: "项目", ko: "루트", example: {} },
  "page.task": { en: "Task", zh: "任务", ko: "작업", example: {} },
  "page.logout": { en: "Log out", zh: "退出登录", ko: "로그아웃", example: {} },
  "page.lease": { en: "What the agent may do", zh: "智能体可以做什么", ko: "에이전트가 할 수 있는 일", example: {} },
  "page.runs": { en: "Runs", zh: "运行", ko: "실행", example: {} },
  "page.approvals": { en: "Approvals", zh: "审批", ko: "승인 요청", example: {} },
  "page.turns": { en: "Recent turns and grants", zh: "最近的轮次与授权", ko: "최근 라운드와 승인", example: {} },
  "page.artifacts": { en: "Artifacts", zh: "交付物", ko: "산출물", example: {} },
  "page.adjustments": { en: "Adjustments", zh: "调整", ko: "조정", example: {} },
  "page.memory": { en: "Memory", zh: "记忆", ko: "메모리", example: {} },
  "page.search_label": { en: "Search this root's memory", zh: "搜索本项目的记忆", ko: "이 루트의 메모리 검색", example: {} },
  "page.search": { en: "Search", zh: "搜索", ko: "검색", example: {} },
  "page.login_title": { en: "longrun status: log in", zh: "longrun 状态：登录", ko: "longrun 상태: 로그인", example: {} },
  "page.login_needs": {
    en: "This page needs a login link. In the project's directory, {open} makes one and opens it ({http} prints one at start); each link works once and opens the page for the host.",
    zh: "此页面需要登录链接。在项目目录中运行 {open} 会生成一个并打开它（{http} 启动时会打印一个）；每个链接只能用一次，打开的是宿主一侧的页面。",
    ko: "이 페이지에는 로그인 링크가 필요합니다. 프로젝트 디렉터리에서 {open}을(를) 실행하면 링크를 만들어 엽니다({http}는 시작할 때 하나를 출력합니다). 링크는 한 번만 쓸 수 있으며 호스트 쪽 페이지를 엽니다.",
    example: { open: "<code>longrun open</code>", http: "<code>longrun http --login-link</code>" },
  },
  "page.login_another": {
    en: "For another link, ask the server with a token (the host's or the agent's; the page then speaks for that side):",
    zh: "要获取另一个链接，请用令牌向服务器请求（宿主的或智能体的；页面随后代表那一方）：",
    ko: "다른 링크가 필요하면 토큰으로 서버에 요청하세요(호스트 또는 에이전트의 토큰; 페이지는 그쪽을 대표합니다):",
    example: {},
  },
  "page.login_tokens": {
    en: "The tokens are in {file} under the server's root, or in the environment it was started with.",
    zh: "令牌在服务器根目录下的 {file} 中，或在启动服务器时的环境变量里。",
    ko: "토큰은 서버 루트 아래의 {file}에 있거나, 서버를 시작한 환경 변수에 있습니다.",
    example: { file: "<code>.longrun/http.json</code>" },
  },
} as const satisfies Record<string, Message>;
