// Package notify speaks systemd's sd_notify protocol for a Type=notify
// service: READY=1 once the daemon serves, WATCHDOG=1 while it makes
// progress, STATUS= for `systemctl status`, and STOPPING=1 with
// EXTEND_TIMEOUT_USEC= during a drain. Outside systemd (no NOTIFY_SOCKET)
// every call is a no-op.
package notify
