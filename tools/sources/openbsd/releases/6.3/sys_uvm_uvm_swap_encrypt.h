/* Source: netzbasis/openbsd-src@bda9423adea36d456667626b097beded37e4751a:sys/uvm/uvm_swap_encrypt.h (OpenBSD 6.3) */

#define SWPENC_ENABLE	0
#define SWPENC_CREATED	1
#define SWPENC_DELETED	2
#define SWPENC_MAXID	3

#define CTL_SWPENC_NAMES { \
	{ "enable", CTLTYPE_INT }, \
	{ "keyscreated", CTLTYPE_INT }, \
	{ "keysdeleted", CTLTYPE_INT }, \
}
