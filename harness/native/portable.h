/*
 * portable.h: which replacements inside libunicorn the core makes.
 *
 * The core makes Unicorn faster in two ways that depend on how the pinned wheel's
 * libunicorn is built: PLT slots pointed at core functions (plt.c; any ELF
 * libunicorn with those slots) and code patched at the start of Unicorn's helpers
 * (dispatch.c, fpu.c; x86-64 with the pinned wheel's bytes, checked by a
 * fingerprint). In portable mode the core makes none of those that only save time
 * (dispatch.c, exitcheck.c, chain.c, tbcache.c, guard.c, tlbflush.c, csrfast.c and
 * with it tlbbank.c: Unicorn's own code runs there, slower, with the same results),
 * and none for F and D: fpu.c does the instructions QEMU 5.0 gets wrong in code hooks
 * on Unicorn's exported softfloat. One replacement stays, because nothing else can
 * see every access: pmp.c's PMP check and TLB fill, through libunicorn's PLT. A host
 * whose libunicorn has no PLT (macOS) cannot run privlab, and says so (hart.py).
 *
 * On by default on any host but x86-64 Linux (the host the replacements were written
 * and measured on); PRIVLAB_PORTABLE=1 forces it, PRIVLAB_PORTABLE=0 turns it off.
 * Read once per process, before the first hart.
 */
#ifndef PRIVLAB_PORTABLE_H
#define PRIVLAB_PORTABLE_H

#include <stdbool.h>

bool portable_mode(void);
bool no_plt(void);   /* plt.c: PRIVLAB_NO_PLT, a host without libunicorn's PLT */

#endif
