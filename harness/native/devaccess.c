/*
 * devaccess.c: which loads and stores a device register window accepts, as QEMU 7.2's
 * memory regions decide it.
 *
 * QEMU gives each device's region the access sizes it accepts (the sifive_test
 * finisher 2 to 4 bytes, the CLINT's msip 4, its timer 4 to 8, the PLIC 4, the
 * NS16550A 1 to 8 over its eight registers) and maps nothing in the rest of the page.
 * Any other access fails the bus transaction: a load or store access fault with tval
 * the address. Unicorn maps a device as whole pages of any access size and splits an
 * 8-byte access into two 4-byte device calls, so without this an `ld` of the finisher
 * reached its register at offset 4 and ended the run, and an `ld` of the UART returned
 * the register at offset 4 in its upper half.
 *
 * The device models declare their windows (harness/devices, `access_rules`); the
 * machine registers them here once. pmp.c's access check asks `devaccess_check` about
 * every access to a device page, before the access: a refusal is an access fault at the
 * instruction, exactly as a PMP refusal is. For that every access must come to the
 * check, so a device page's TLB entry is smaller than a page (QEMU's softmmu refills
 * such an entry on every access); device accesses already leave translated code for
 * the device model, so the refill costs nothing that matters.
 *
 * The check also keeps the last access it let through (a walk's page-table read too),
 * so that the device call for the upper half of a split access knows it is one
 * (`devaccess_in_last`): QEMU's NS16550A answers an access of any size with the one
 * register at its address.
 */
#include <stdbool.h>
#include <stdint.h>

#include "hart.h"

#define MAX_REGIONS 8
#define MAX_RULES 16

struct region {
    uint64_t lo, hi;   /* [lo, hi): device pages with rules */
};

struct rule {
    uint64_t lo, hi;   /* [lo, hi): accesses wholly inside it */
    unsigned min, max; /* of these sizes, in bytes */
};

static struct region regions[MAX_REGIONS];
static unsigned nregions;
static struct rule rules[MAX_RULES];
static unsigned nrules;

/* The last device access the check let through, on this thread (the hart's). */
static _Thread_local uint64_t last_addr = UNLIMITED, last_size;

/* Forget every region and rule (the machine registers the platform's anew). */
void devaccess_clear(void)
{
    nregions = nrules = 0;
}

/* Pages [lo, hi) hold device registers whose accesses follow rules. */
int devaccess_region(uint64_t lo, uint64_t hi)
{
    if (nregions == MAX_REGIONS || hi <= lo)
        return 0;
    regions[nregions++] = (struct region){lo, hi};
    return 1;
}

/* Accesses of min..max bytes wholly inside [lo, hi) reach the device. */
int devaccess_rule(uint64_t lo, uint64_t hi, unsigned min, unsigned max)
{
    if (nrules == MAX_RULES || hi <= lo || min == 0 || max < min)
        return 0;
    rules[nrules++] = (struct rule){lo, hi, min, max};
    return 1;
}

bool devaccess_page(uint64_t pa)
{
    for (unsigned i = 0; i < nregions; i++)
        if (regions[i].lo <= pa && pa < regions[i].hi)
            return true;
    return false;
}

/* May an access of `size` bytes at physical `pa` reach the device? Yes outside the
 * regions with rules (RAM, devices without rules: left to Unicorn). Notes what it lets
 * through for devaccess_in_last. */
bool devaccess_check(uint64_t pa, uint64_t size)
{
    if (!devaccess_page(pa))
        return true;
    for (unsigned i = 0; i < nrules; i++) {
        const struct rule *r = &rules[i];
        if (r->lo <= pa && pa + size <= r->hi && size >= r->min && size <= r->max) {
            last_addr = pa;
            last_size = size;
            return true;
        }
    }
    return false;
}

/* Is a device call at physical `pa` past the start of the last device access let
 * through on this thread, so the upper half of one Unicorn split in two? One call
 * with one number: the machine asks it at every access of such a device, a console's
 * every character. */
bool devaccess_in_last(uint64_t pa)
{
    return last_addr < pa && pa < last_addr + last_size;
}

/* A fetch from a device stopped Unicorn (it cannot execute from a device:
 * UC_ERR_FETCH_PROT) and the machine decided the trap QEMU 7.2 takes there, which reads
 * the instruction from the device's registers: `code` with `tval` at `pc`. */
void hart_device_fetch_trap(hart *h, uint64_t pc, unsigned code, uint64_t tval)
{
    take_trap(h, false, code, pc, tval);
    h->s.unmapped_addr = UNLIMITED;
}
