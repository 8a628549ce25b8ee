/*
 * chain.c: after a CSR instruction, the next block is found from translated code.
 *
 * Unicorn (QEMU 5.0's RISC-V translator) ends the block of every CSR instruction, and
 * of fence.i, sfence.vma, mret, sret and wfi, with an exit to its main loop
 * (`exit_tb`, which calls tcg_gen_exit_tb(NULL, 0) through libunicorn's PLT). The main
 * loop then looks for pending interrupts and exit requests, finds the next block
 * through the jump cache and runs it, unchained. Kernels run such instructions all
 * the time: xv6 reads and writes sstatus three to five times around every spinlock
 * (push_off, pop_off) and writes satp twice per system call, so its usertests return
 * to the main loop about once every five instructions of those paths; cpu_exec alone
 * was 7.6% of the host's time there.
 *
 * For an engine with a core, nothing the main loop does between two blocks is needed
 * at those points:
 *   - interrupts are the core's, taken at the next block's entry (hooks.c on_block,
 *     which runs however that block is reached); Unicorn's own interrupt request is
 *     never raised for a core's engine (docs/unicorn.md);
 *   - a stop asked for with uc_emu_stop (the core's request_stop, the host) sets the
 *     CPU's exit flag, which the next block checks at its start (QEMU's gen_tb_start)
 *     before it runs anything;
 *   - a block's lookup (helper_lookup_tb_ptr) computes the CPU's flags (privilege,
 *     FS) afresh, as the main loop does, so a CSR write that changes them finds the
 *     block translated for the new state, and a block not yet translated returns to
 *     the main loop as before.
 * So for a core's engines this replaces the exit with QEMU's lookup_and_goto_ptr,
 * which is what every indirect jump (jalr) already ends with. Blocks end where they
 * ended, so instret and the points where interrupts are taken do not move. Calls that
 * exit to a block's own successor (a chained exit, tb != NULL) or with another code,
 * and engines without a core, keep Unicorn's code.
 */
#include "hart.h"
#include "portable.h"

void tcg_gen_exit_tb_riscv32(void *tcg_ctx, void *tb, unsigned idx);
void tcg_gen_exit_tb_riscv64(void *tcg_ctx, void *tb, unsigned idx);
void tcg_gen_lookup_and_goto_ptr_riscv32(void *tcg_ctx);
void tcg_gen_lookup_and_goto_ptr_riscv64(void *tcg_ctx);

static uint64_t chained, exited;

static void exit_tb32(void *tcg_ctx, void *tb, unsigned idx)
{
    if (!tb && idx == 0 && hart_of_engine(exitcheck_engine(tcg_ctx, false))) {
        chained++;
        tcg_gen_lookup_and_goto_ptr_riscv32(tcg_ctx);
        return;
    }
    exited++;
    tcg_gen_exit_tb_riscv32(tcg_ctx, tb, idx);
}

static void exit_tb64(void *tcg_ctx, void *tb, unsigned idx)
{
    if (!tb && idx == 0 && hart_of_engine(exitcheck_engine(tcg_ctx, true))) {
        chained++;
        tcg_gen_lookup_and_goto_ptr_riscv64(tcg_ctx);
        return;
    }
    exited++;
    tcg_gen_exit_tb_riscv64(tcg_ctx, tb, idx);
}

/* Once per process, after exitcheck_install (which finds the engine in a TCG
 * context), before any core translates. */
void chain_install(void)
{
    if (portable_mode())
        return;   /* portable.h: CSR blocks exit to Unicorn's loop */
    plt_patch("tcg_gen_exit_tb_riscv32", (void *)exit_tb32);
    plt_patch("tcg_gen_exit_tb_riscv64", (void *)exit_tb64);
}

/* Block ends translated since the process started: `chained` those that look the
 * next block up in translated code, else the exits generated as Unicorn's. */
uint64_t chain_count(bool chained_ends)
{
    return chained_ends ? chained : exited;
}

