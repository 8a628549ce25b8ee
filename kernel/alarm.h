// alarm.h: a process's alarm (kernel/alarm.c, lab 12): sigalarm(ticks, handler) runs
// handler after every `ticks` timer ticks the process spends in U.
#ifndef ALARM_H
#define ALARM_H

#include "trapframe.h"
#include "types.h"

struct alarmstate {
  long interval;           // ticks between alarms; 0: no alarm
  uintptr_t handler;       // user address of void handler(void)
  long ticks;              // ticks taken in U since the last alarm, at most interval
  int running;             // the handler runs: no alarm until its sigreturn
  struct trapframe saved;  // the interrupted registers, put back by sigreturn: kept
                           // in the kernel, out of the handler's reach
};

#endif // ALARM_H
