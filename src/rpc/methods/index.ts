/** Every protocol method, in the order system.describe lists them. */
import type { Method } from "../method.ts";
import { approvalMethods } from "./approvals.ts";
import { deliverableMethods } from "./deliverables.ts";
import { eventMethods } from "./events.ts";
import { memoryMethods } from "./memory.ts";
import { runMethods } from "./runs.ts";
import { taskMethods } from "./task.ts";

export function allMethods(): Method[] {
  return [...taskMethods, ...memoryMethods, ...runMethods, ...deliverableMethods, ...approvalMethods, ...eventMethods] as Method[];
}
