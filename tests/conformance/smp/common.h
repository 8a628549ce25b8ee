// common.h: what the multi-hart programs share: the finisher, a hex printer on the
// UART, and parking the harts a program does not use.
#include "platform.h"

.macro PASS
    li t6, PLATFORM_FINISHER_BASE
    li t5, FINISHER_PASS
    sw t5, 0(t6)
99: j 99b
.endm

// Print a0 as 8 hex digits and a newline on UART0 (polled; clobbers t0-t3, a0).
.macro PRINT_HEX
    li t0, PLATFORM_UART0_BASE
    li t1, 28
98: srl t2, a0, t1
    andi t2, t2, 15
    li t3, 10
    blt t2, t3, 97f
    addi t2, t2, 'a' - 10 - '0'
97: addi t2, t2, '0'
    sb t2, 0(t0)
    addi t1, t1, -4
    bgez t1, 98b
    li t2, '\n'
    sb t2, 0(t0)
.endm
