#ifndef CBUZZLINUX_H
#define CBUZZLINUX_H

#include <spawn.h>
#include <time.h>

/// Routes the Swift runtime's global-executor jobs to `hook` (a Swift
/// `@convention(thin) (UnownedJob, Original) -> Void`), or back to libdispatch
/// with NULL. The runtime reads `swift_task_enqueueGlobal_hook` on every
/// enqueue; set it before the jobs it should catch are made.
void CBuzzLinux_setGlobalEnqueueHook(void *_Nullable hook);

// glibc calls that sit behind _GNU_SOURCE or in headers Swift's Glibc module
// does not import (<sys/timerfd.h>); shims.c calls them with the real headers,
// so the flag values below are glibc's own, not copies.

/// pipe2(2): both ends get `flags` (O_CLOEXEC, O_NONBLOCK) from birth, so a
/// program another thread starts meanwhile cannot inherit them.
int CBuzzLinux_pipe2(int fds[_Nonnull 2], int flags);

/// posix_spawn_file_actions_addclosefrom_np (glibc 2.34): the child closes
/// every descriptor from `from` up, whoever opened it without O_CLOEXEC.
/// ENOSYS where glibc is older.
int CBuzzLinux_posix_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *_Nonnull actions, int from);

/// pthread_setname_np(3) on the calling thread (the kernel keeps 15 bytes).
int CBuzzLinux_pthread_setname(const char *_Nonnull name);

/// timerfd_create(2).
int CBuzzLinux_timerfd_create(int clockid, int flags);

/// timerfd_settime(2).
int CBuzzLinux_timerfd_settime(int fd, int flags, const struct itimerspec *_Nonnull new_value,
                               struct itimerspec *_Nullable old_value);

/// TFD_CLOEXEC, TFD_NONBLOCK, TFD_TIMER_ABSTIME and TFD_TIMER_CANCEL_ON_SET.
extern const int CBuzzLinux_TFD_CLOEXEC;
extern const int CBuzzLinux_TFD_NONBLOCK;
extern const int CBuzzLinux_TFD_TIMER_ABSTIME;
extern const int CBuzzLinux_TFD_TIMER_CANCEL_ON_SET;

#endif
