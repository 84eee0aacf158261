// Child processes that end with the process that started them, however it ends: SIGKILL and SIGTERM run no exit
// hook, so a server started by a test or a harness would otherwise keep its port, memory and files for ever.
// Linux's parent-death signal (prctl PR_SET_PDEATHSIG), set by util-linux's setpriv just before it execs the
// command, so the spawned PID stays the command's own. The signal follows the thread that spawned the child:
// spawn from the main thread.

/** `command` run so that it is sent SIGKILL when its parent ends. */
export function endingWithParent(command: readonly string[]): string[] {
  return ['setpriv', '--pdeathsig', 'SIGKILL', '--', ...command];
}
