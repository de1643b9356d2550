package io.distlock.autoconfigure;

/**
 * A {@code distlock.*} property has a value distlock cannot work with; reported at start-up by
 * {@link InvalidDistLockPropertyFailureAnalyzer}.
 */
public class InvalidDistLockPropertyException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	private final String property;

	private final transient Object value;

	private final String action;

	/**
	 * @param property the property's name
	 * @param value its value
	 * @param problem what is wrong with it
	 * @param action what to do
	 */
	public InvalidDistLockPropertyException(String property, Object value, String problem, String action) {
		this(property, value, problem, action, null);
	}

	/**
	 * @param property the property's name
	 * @param value its value, with any secret already masked
	 * @param problem what is wrong with it
	 * @param action what to do
	 * @param cause the failure that showed it, if any
	 */
	public InvalidDistLockPropertyException(String property, Object value, String problem, String action,
			Throwable cause) {
		super("Invalid value '" + value + "' for property '" + property + "': " + problem, cause);
		this.property = property;
		this.value = value;
		this.action = action;
	}

	/** @return the property's name */
	public String getProperty() {
		return this.property;
	}

	/** @return the rejected value */
	public Object getValue() {
		return this.value;
	}

	/** @return what to do */
	public String getAction() {
		return this.action;
	}

}
