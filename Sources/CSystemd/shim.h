// libsystemd (libsystemd-dev): the journal's native protocol and sd_notify.
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-daemon.h>
