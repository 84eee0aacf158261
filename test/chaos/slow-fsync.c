/*
 * LD_PRELOAD helper of the chaos harness's slow-disk fault: fsync and fdatasync first sleep for the number of
 * milliseconds written in the file that BROOK_SLOW_FSYNC_FILE names (no variable, no file, 0 or garbage: no
 * delay), then do their work. The file is read at every call, so the harness slows a running broker's flushes
 * and heals them by writing or removing it. Writes are not slowed: a disk whose flushes crawl while the page
 * cache still takes writes, the case where group commit and recovery points lag behind acknowledgements.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* At most ten minutes: a larger number is a mistake, not a slow disk. */
#define MAX_DELAY_MS 600000L

static long delay_ms(void) {
  const char *path = getenv("BROOK_SLOW_FSYNC_FILE");
  if (path == NULL) return 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[32];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  long ms = strtol(buf, NULL, 10);
  return ms > 0 && ms <= MAX_DELAY_MS ? ms : 0;
}

static void slow_down(void) {
  int saved = errno;
  long ms = delay_ms();
  if (ms > 0) {
    struct timespec left = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
  errno = saved;
}

int fsync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
  slow_down();
  return real(fd);
}

int fdatasync(int fd) {
  static int (*real)(int);
  if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
  slow_down();
  return real(fd);
}
