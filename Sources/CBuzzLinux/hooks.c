#include "CBuzzLinux.h"

// Declared by the Swift concurrency runtime (swift/Runtime/Concurrency.h) and
// defined in libswift_Concurrency, shared or static: linking resolves it, so
// no dlsym and no exported symbols are needed.
extern void *_Nullable swift_task_enqueueGlobal_hook;

void CBuzzLinux_setGlobalEnqueueHook(void *_Nullable hook) {
    swift_task_enqueueGlobal_hook = hook;
}
