// uart_first_key.S: what OpenSBI's 8250 driver does at start (read LSR, then RBR
// without looking at data ready), then wait for a key like a console getc (poll LSR.DR)
// and exit with that key's byte as the status. A key typed by a person is not there
// when the driver starts, so the first key the program waits for is the first one
// typed: `--input A` exits 65.
#define UART 0x10000000
#define UART_RBR 0
#define UART_LSR 5
#define LSR_DR 1
#define FINISHER 0x100000
#define FINISHER_FAIL 0x3333

    .section .text.entry
    .globl _start
_start:
    li t0, UART
    lbu t1, UART_LSR(t0)        // "clear line status"
    lbu t1, UART_RBR(t0)        // "read receive buffer": a blind read
wait:
    lbu t1, UART_LSR(t0)
    andi t1, t1, LSR_DR
    beqz t1, wait
    lbu t1, UART_RBR(t0)
    slli t1, t1, 16
    li t2, FINISHER_FAIL
    or t1, t1, t2
    li t0, FINISHER
    sw t1, 0(t0)
1:  j 1b
