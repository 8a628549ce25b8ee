// deadlock.h: what sync.c tells deadlock.c (the deadlock-detection lab, labs/deadlock):
// who waits for what, who holds how many units of which semaphore, and the question
// asked before every mutex_lock and semaphore_down.
#ifndef DEADLOCK_H
#define DEADLOCK_H

struct proc;

// What mutex_lock and semaphore_down return, with detection on, instead of waiting
// for something that can never come (rCore-Tutorial's and uCore-Tutorial's value).
#define DEADLOCK_DETECTED (-0xDEAD)

// The kinds of object a thread can wait for.
enum dl_kind { DL_NONE, DL_MUTEX, DL_SEM };

// The calling thread asks for one unit of object `id` of `kind` (a mutex, or a unit
// of a semaphore): recorded as its need. With detection on for its process, and no
// order in which every thread could then finish, the need is withdrawn again and the
// result is DEADLOCK_DETECTED; otherwise 0, and the need stays until
// deadlock_wait_over() or deadlock_sem_taken().
long deadlock_request(enum dl_kind kind, int id);

void deadlock_wait(enum dl_kind kind, int id);  // record a need without the check
void deadlock_wait_over(void);  // the caller's need is met or abandoned: withdrawn
void deadlock_sem_taken(int id);  // took a unit of semaphore id: held, need withdrawn
void deadlock_sem_given(int id);  // gave one back (a release, held by it or not)
void deadlock_sem_created(int id);  // a new semaphore id: nobody holds any of it
void deadlock_thread_exit(struct proc *t);  // t is gone: forget what it held

#endif // DEADLOCK_H
