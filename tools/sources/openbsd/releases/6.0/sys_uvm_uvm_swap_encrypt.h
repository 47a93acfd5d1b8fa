/* Source: netzbasis/openbsd-src@8030d7a93fa9d4cae20487395c7e1c7126b8a954:sys/uvm/uvm_swap_encrypt.h (OpenBSD 6.0) */

#define SWPENC_ENABLE	0
#define SWPENC_CREATED	1
#define SWPENC_DELETED	2
#define SWPENC_MAXID	3

#define CTL_SWPENC_NAMES { \
	{ "enable", CTLTYPE_INT }, \
	{ "keyscreated", CTLTYPE_INT }, \
	{ "keysdeleted", CTLTYPE_INT }, \
}
