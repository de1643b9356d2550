package io.distlock.jdbc;

import java.sql.SQLException;

import com.zaxxer.hikari.SQLExceptionOverride;

/**
 * Tells Hikari that H2's "database is already closed" (90121) means the pooled connection is dead,
 * as a restarted server's connections are; Hikari only recognises SQL state 08 by itself.
 */
public class H2ClosedConnectionEviction implements SQLExceptionOverride {

	@java.lang.Override
	public Override adjudicate(SQLException ex) {
		return (ex.getErrorCode() == 90121) ? Override.MUST_EVICT : Override.CONTINUE_EVICT;
	}

}
