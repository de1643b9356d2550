package io.distlock;

/**
 * A setting of a registry (a key prefix, a watchdog timeout, a table name, …) has a value distlock
 * cannot work with. It names the setting as the registry's builder does ({@link #getSetting()}), so
 * that the Spring Boot auto-configuration can report it under its {@code distlock.*} property.
 */
public class InvalidLockSettingException extends IllegalArgumentException {

	private static final long serialVersionUID = 1L;

	private final String setting;

	private final transient Object value;

	private final String problem;

	private final String advice;

	/**
	 * @param setting the setting's name, as the builders spell it (e.g. {@code watchdogTimeout})
	 * @param value the rejected value; never a secret
	 * @param problem what is wrong with it, e.g. "must be at least 30ms"
	 * @param advice what to set instead, phrased to follow "set it", e.g. "to a duration such as 30s"
	 */
	public InvalidLockSettingException(String setting, Object value, String problem, String advice) {
		super(setting + " " + problem + " but was '" + value + "'. Set it " + advice + ".");
		this.setting = setting;
		this.value = value;
		this.problem = problem;
		this.advice = advice;
	}

	/** @return the setting's name, as the builders spell it */
	public String getSetting() {
		return this.setting;
	}

	/** @return the rejected value */
	public Object getValue() {
		return this.value;
	}

	/** @return what is wrong with the value */
	public String getProblem() {
		return this.problem;
	}

	/** @return what to set instead, phrased to follow "set it" */
	public String getAdvice() {
		return this.advice;
	}

}
