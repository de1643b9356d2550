package io.distlock.zookeeper;

import java.nio.charset.StandardCharsets;

/**
 * The data of a lock node: the owner id, a NUL character and the nonce of the create that made
 * it, so that a create can tell its own node from an earlier one of the same owner.
 */
final class ZooKeeperNodeData {

	/** Separates the owner id from the create's nonce in a node's data. */
	private static final char NONCE_SEPARATOR = '\u0000';

	private ZooKeeperNodeData() {
	}

	static byte[] nodeData(String owner, String nonce) {
		return (owner + NONCE_SEPARATOR + nonce).getBytes(StandardCharsets.UTF_8);
	}

	/** @return the owner id in a node's data (all of it for a node written without a nonce) */
	static String ownerOf(byte[] data) {
		String text = new String(data, StandardCharsets.UTF_8);
		int separator = text.lastIndexOf(NONCE_SEPARATOR);
		return (separator < 0) ? text : text.substring(0, separator);
	}

	/** @return the create's nonce in a node's data, empty if none */
	static String nonceOf(byte[] data) {
		String text = new String(data, StandardCharsets.UTF_8);
		int separator = text.lastIndexOf(NONCE_SEPARATOR);
		return (separator < 0) ? "" : text.substring(separator + 1);
	}

}
