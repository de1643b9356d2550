package io.distlock.aop;

import java.lang.reflect.Method;

/**
 * The root object of {@code @DistributedLock} expressions: {@code #root.method},
 * {@code #root.target}, {@code #root.args}.
 *
 * @param method the invoked method
 * @param target the bean
 * @param args the arguments
 */
public record LockExpressionRoot(Method method, Object target, Object[] args) {

	/** @return the invoked method */
	public Method getMethod() {
		return this.method;
	}

	/** @return the bean */
	public Object getTarget() {
		return this.target;
	}

	/** @return the arguments */
	public Object[] getArgs() {
		return this.args;
	}

}
