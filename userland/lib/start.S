// start.S: where every user program begins (the ELF entry point).
//
// Contract: the kernel's exec (kernel/exec.c) enters here in U-mode with a0 = argc,
// a1 = argv (on the user stack) and sp 16-byte aligned. We clear the frame pointer
// so backtraces end here, call main(argc, argv), and pass its result to exit().
.section .text.start
.global _start
_start:
    mv s0, zero
    call main
    call exit           // exit(main's return value): never returns
1:  j 1b
