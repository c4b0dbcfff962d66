#ifndef CBUZZLINUX_H
#define CBUZZLINUX_H

/// Routes the Swift runtime's global-executor jobs to `hook` (a Swift
/// `@convention(thin) (UnownedJob, Original) -> Void`), or back to libdispatch
/// with NULL. The runtime reads `swift_task_enqueueGlobal_hook` on every
/// enqueue; set it before the jobs it should catch are made.
void CBuzzLinux_setGlobalEnqueueHook(void *_Nullable hook);

#endif
