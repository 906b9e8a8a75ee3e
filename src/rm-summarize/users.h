/*
 * users.h: a uid's user name for the report (users.c).
 */
#ifndef RM_SUMMARIZE_USERS_H
#define RM_SUMMARIZE_USERS_H

#include <stddef.h>

/*
 * The name /etc/passwd gives uid, into buf; a uid with no entry (or no
 * file) is its number.  The file is read once, directly: never through
 * NSS (no LDAP or sssd lookup from a summary).  Returns buf.
 */
const char *user_name(long uid, char *buf, size_t size);

#endif
