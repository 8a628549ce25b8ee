// mret_no_pmp.S: mret from M to S with no PMP entry configured, then a store and a
// load in S, then ecall back to M.
//
// QEMU 7.2 (and privlab by default): the mret is an illegal instruction (cause 2), the
// program exits with 10 + 2 = 12. QEMU before 7.0 (privlab --pmp-before-qemu7): S runs,
// its store and load reach RAM, the ecall from S (cause 9) powers off with status 0.
#define FINISHER 0x100000
#define FINISHER_PASS 0x5555
#define FINISHER_FAIL 0x3333
#define MSTATUS_MPP 0x1800
#define MPP_S 0x0800
#define CAUSE_S_ECALL 9

    .section .text.entry
    .globl _start
_start:
    la t0, m_trap
    csrw mtvec, t0
    li t0, MSTATUS_MPP
    csrc mstatus, t0
    li t0, MPP_S
    csrs mstatus, t0
    la t0, s_code
    csrw mepc, t0
    mret                        // illegal on QEMU 7.2 with no PMP entry

s_code:
    la t0, word
    li t1, 42
    sw t1, 0(t0)
    lw t2, 0(t0)
    bne t1, t2, s_code          // never: a lost store would loop (and time out)
    ecall                       // to m_trap with cause 9

m_trap:
    csrr t0, mcause
    li t1, CAUSE_S_ECALL
    li t2, FINISHER
    bne t0, t1, fail
    li t0, FINISHER_PASS
    sw t0, 0(t2)
fail:                           // exit 10 + mcause
    addi t0, t0, 10
    slli t0, t0, 16
    li t1, FINISHER_FAIL
    or t0, t0, t1
    sw t0, 0(t2)
1:  j 1b

    .data
word:
    .word 0
