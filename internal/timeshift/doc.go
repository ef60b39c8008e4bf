// Package timeshift is a clock for tests of time-dependent behaviour that
// also needs real time to pass (a real CLI answering, a fake API's reset in
// three seconds): it runs at the wall clock's pace from a chosen start, and
// a test can jump it forward (past midnight, to a schedule's run) without
// waiting. Timers created with After fire when either real time or a jump
// reaches their deadline.
package timeshift
