#define _GNU_SOURCE
#include "CBuzzLinux.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/timerfd.h>
#include <unistd.h>

// glibc < 2.36 headers lack it; the kernel has had it since 3.0.
#ifndef TFD_TIMER_CANCEL_ON_SET
#define TFD_TIMER_CANCEL_ON_SET (1 << 1)
#endif

int CBuzzLinux_pipe2(int fds[_Nonnull 2], int flags) {
    return pipe2(fds, flags);
}

int CBuzzLinux_posix_spawn_file_actions_addclosefrom(posix_spawn_file_actions_t *_Nonnull actions, int from) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
#else
    (void)actions;
    (void)from;
    return ENOSYS;
#endif
}

int CBuzzLinux_pthread_setname(const char *_Nonnull name) {
    return pthread_setname_np(pthread_self(), name);
}

int CBuzzLinux_timerfd_create(int clockid, int flags) {
    return timerfd_create(clockid, flags);
}

int CBuzzLinux_timerfd_settime(int fd, int flags, const struct itimerspec *_Nonnull new_value,
                               struct itimerspec *_Nullable old_value) {
    return timerfd_settime(fd, flags, new_value, old_value);
}

const int CBuzzLinux_TFD_CLOEXEC = TFD_CLOEXEC;
const int CBuzzLinux_TFD_NONBLOCK = TFD_NONBLOCK;
const int CBuzzLinux_TFD_TIMER_ABSTIME = TFD_TIMER_ABSTIME;
const int CBuzzLinux_TFD_TIMER_CANCEL_ON_SET = TFD_TIMER_CANCEL_ON_SET;
