CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL);
INSERT INTO customers VALUES (1, 'Ada Lovelace'), (2, 'Grace Hopper'), (3, 'Linus Torvalds');
