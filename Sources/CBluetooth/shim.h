#include <sys/socket.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>
#include <linux/capability.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/l2cap.h>

/* What Swift cannot reach on its own: the HCI ioctl requests are function-like macros
   (_IOR/_IOW), HCIGETDEVLIST fills a structure with a flexible array member, and capget(2)
   has no libc wrapper (syscall(2) is variadic). Each returns what the call returned and leaves
   errno as it found it. */

/* HCIDEVUP on a control socket: powers up adapter `dev_id` (needs CAP_NET_ADMIN). */
static inline int hrmd_hci_device_up(int control, int dev_id) {
    return ioctl(control, HCIDEVUP, dev_id);
}

/* HCIGETDEVLIST on a control socket: the ids of every adapter the kernel knows, up or down,
   into `ids` (at most HCI_MAX_DEV). Returns how many, or -1. */
static inline int hrmd_hci_device_ids(int control, uint16_t ids[HCI_MAX_DEV]) {
    uint32_t storage[(sizeof(struct hci_dev_list_req) + HCI_MAX_DEV * sizeof(struct hci_dev_req)) / sizeof(uint32_t) + 1];
    struct hci_dev_list_req *list = (struct hci_dev_list_req *)storage;
    memset(storage, 0, sizeof(storage));
    list->dev_num = HCI_MAX_DEV;
    if (ioctl(control, HCIGETDEVLIST, list) < 0) return -1;
    int count = list->dev_num < HCI_MAX_DEV ? list->dev_num : HCI_MAX_DEV;
    for (int i = 0; i < count; i++) ids[i] = list->dev_req[i].dev_id;
    return count;
}

/* capget(2) for this process: the effective capability set as a 64-bit mask. 0 or -1. */
static inline int hrmd_effective_capabilities(uint64_t *effective) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capget, &header, data) < 0) return -1;
    *effective = ((uint64_t)data[1].effective << 32) | data[0].effective;
    return 0;
}
