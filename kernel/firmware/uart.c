// uart.c: the NS16550A at PLATFORM_UART0_BASE, polled, for the SBI console.
#include "fw.h"
#include "platform.h"

// Register offsets (byte registers) and the bits we use.
#define UART_RBR 0  // receive buffer (read)
#define UART_THR 0  // transmit holding (write)
#define UART_IER 1  // interrupt enable
#define UART_LCR 3  // line control
#define UART_LSR 5  // line status
#define LCR_EIGHT_BITS  0x03
#define LSR_RX_READY    0x01
#define LSR_TX_IDLE     0x20

static volatile uint8_t *const uart = (volatile uint8_t *)PLATFORM_UART0_BASE;

void uart_init(void) {
  uart[UART_IER] = 0;  // polled: no interrupts
  uart[UART_LCR] = LCR_EIGHT_BITS;
  // The FIFO control register is left alone: enabling the FIFO flushes it, and input
  // typed (or piped) before boot would be lost.
}

void uart_putc(int c) {
  while ((uart[UART_LSR] & LSR_TX_IDLE) == 0)
    ;
  uart[UART_THR] = (uint8_t)c;
}

// The next received byte, or -1 if none is waiting.
int uart_getc(void) {
  if ((uart[UART_LSR] & LSR_RX_READY) == 0)
    return -1;
  return uart[UART_RBR];
}

void uart_puts(const char *s) {
  while (*s)
    uart_putc(*s++);
}

void uart_puthex(uintptr_t x) {
  uart_puts("0x");
  for (int shift = sizeof(x) * 8 - 4; shift >= 0; shift -= 4)
    uart_putc("0123456789abcdef"[(x >> shift) & 0xf]);
}
