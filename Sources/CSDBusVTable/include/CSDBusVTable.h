#ifndef CSDBUSVTABLE_H
#define CSDBUSVTABLE_H

/* Builds an sd_bus_vtable array at run time, entry by entry, from a description that is only
 * known when a program runs. The SD_BUS_* vtable macros are compound initialisers Swift cannot
 * expand; these functions fill the same fields. Every entry is zeroed first (the header asks
 * for unused union bytes to be zero). The caller owns the array and every string it points to,
 * and keeps them alive while the vtable is registered with sd_bus_add_object_vtable. */

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/* sizeof(sd_bus_vtable), for allocating the array. */
size_t csdbus_vtable_entry_size(void);

/* The first entry (SD_BUS_VTABLE_START): element size, and the feature bit saying methods and
 * signals carry argument names. */
void csdbus_vtable_start(sd_bus_vtable *entry, uint64_t flags);

/* A method. `names` is every input name then every output name, each followed by a NUL, then
 * one more NUL (all names or none: "" means no names). */
void csdbus_vtable_method(
        sd_bus_vtable *entry, const char *member, const char *signature, const char *result,
        const char *names, sd_bus_message_handler_t handler, uint64_t flags);

/* A signal; `names` as for methods (each argument name followed by a NUL, then one more NUL). */
void csdbus_vtable_signal(sd_bus_vtable *entry, const char *member, const char *signature, const char *names, uint64_t flags);

/* A read-only property whose value comes from `getter`. */
void csdbus_vtable_property(
        sd_bus_vtable *entry, const char *member, const char *signature, sd_bus_property_get_t getter, uint64_t flags);

/* The last entry (SD_BUS_VTABLE_END). */
void csdbus_vtable_end(sd_bus_vtable *entry);

/* The flags Swift needs (the enum is `unsigned long long` wide and imported awkwardly). */
uint64_t csdbus_flag_unprivileged(void);
uint64_t csdbus_flag_property_const(void);

#endif
